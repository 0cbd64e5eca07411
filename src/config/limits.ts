// Every limit and default of the service, in one place, each named with its
// unit last. checkLimits() asserts their relations, and runs when this module
// loads (TigerBeetle's habit): every command, worker and test that reads a
// limit has them checked, and a bad edit fails loudly instead of misbehaving
// under load.

import assert from 'node:assert/strict';

export const LIMITS = Object.freeze({
  // --- Query shape (service-spec.md section 4.3 and 8) ---
  /** Default `limit` when the client gives none. */
  resultsDefault: 10_000,
  /** Ceiling for results_max of any key; the product's largest licence is 1 M. */
  resultsMaxCeiling: 1_000_000,
  /** Spec 8.6: the exclude pattern is at most 4096 characters before URL encoding. */
  excludeCharsMax: 4096,
  /** Our bound on the value path segment; the spec leaves it open. */
  patternCharsMax: 4096,
  /** Spec 4.3 / 8.7. */
  idCharsMax: 30,
  swclientCharsMax: 20,
  versionCharsMax: 20,
  /** Whole request URL, before decoding; uWS itself caps headers near 4 KB per line. */
  urlBytesMax: 16_384,

  // --- Scanning ---
  /** RE2 program memory; large counted repetitions fail to compile instead of eating RAM. */
  re2MaxMemBytes: 8 << 20,
  /**
   * A search, flexible or standard, running longer than this ends with an
   * in-stream `failed` ("Query timed out"); serve --search-timeout-ms.
   */
  searchTimeoutMs: 120_000,
  /** A timeout below the keep-alive interval would end streams before a client could tell slow from dead. */
  searchTimeoutMsMin: 10,
  searchTimeoutMsMax: 3_600_000,
  /**
   * Results the merge visits (skipped by offset or written) before it gives
   * the front-end thread to other requests for a loop iteration. 512 lookup
   * rows cost ~0.5-1 ms (bench/lookup.ts), within the few ms a request may
   * hold the thread.
   */
  pageGroupsPerTurn: 512,
  /**
   * Index rows a lookup source reads (matching or not: a fence or rrtype
   * filter may drop them all) before it waits a turn: the same bound for work
   * that writes nothing.
   */
  lookupRowsPerTurn: 2_048,
  /** Bytes of blob one scan step covers before it checks the cancel flag and yields a batch (~1 ms at 1 GB/s). */
  scanChunkBytes: 1 << 20,
  /** Matches per batch posted from a worker; ~1,000 names or 32-64 KB moves 10-18 M items/s. */
  batchItemsMax: 1_024,
  /** Trigram plans whose candidate count exceeds this fraction of a blob's records fall back to the blob scan. */
  trigramCandidateFractionMax: 0.05,
  /**
   * Wall time between two cancel checks of a blob scan. scanChunkBytes alone is
   * ~1 ms at DFA speed, but a pattern that sends RE2 to its NFA scans 8-30 MB/s
   * (measured), i.e. 35-120 ms per chunk: too slow for a 50 ms cancel.
   */
  scanSliceMs: 5,
  /** A worker waits this long for a credit, then pauses its task and frees the thread (search/local/scan-protocol.ts). */
  scanCreditWaitMs: 10,
  /**
   * Default wall time a scan task holds its worker before it ends with
   * `resumeAt` and its rest queues behind the tasks waiting (serve
   * --scan-turn-ms): a 10 s NFA-bound scan must not make a 2 ms query wait
   * 10 s. A turn costs one task round trip (~0.3 ms); every default-size
   * answer measured on 10 M names fits in one.
   */
  scanTurnMs: 100,
  scanTurnMsMin: 10,
  scanTurnMsMax: 600_000,
  /**
   * Most batches one scan task may post ahead of the socket: 12 x 1,024
   * items (~1.2 MB) covers a default-limit answer (10,000) in one go.
   */
  scanCreditsMax: 12,
  /** A worker holding matches posts them after this long without a full batch, so a slow, selective scan streams promptly. */
  scanFlushStaleMs: 25,
  /** Records per range below which splitting a shard across workers is not worth a task. */
  scanSplitRecordsMin: 200_000,
  /**
   * A cancelled task ends by itself within one scan slice (scanSliceMs);
   * one still running after this long has its worker thread killed and
   * respawned (Piscina's abort), the last resort.
   */
  scanAbortGraceMs: 200,
  /** Shards a scan worker keeps attached (a FlatBuffer table walk saved per task). */
  workerShardsCachedMax: 64,
  /**
   * Compiled patterns a scan worker keeps: each RE2 may grow a DFA cache up
   * to re2MaxMemBytes (8 MB), so 16 bound that to ~128 MB a worker while
   * repeated queries (paging with offset, one analyst's session) still hit.
   */
  workerPatternsCachedMax: 16,
  /**
   * Value-range bounds a scan worker remembers (shard, column, value -> the
   * record where the value would start): a full scan is cut at the same
   * values until the shards change, and each bound is a binary search of
   * random reads over a shard's mapping.
   */
  workerBoundsCachedMax: 4_096,

  // --- Streaming ---
  /**
   * Request log lines wait at most this long in their batch before they are handed to the log's
   * destination (server/log.ts): one write per batch instead of per line cost an exact lookup a
   * third less CPU (issue 22); a person tailing the log sees a line within this.
   */
  requestLogFlushMs: 100,
  /** Keep-alive `{}` after this long with nothing written. */
  keepAliveMs: 1_000,
  /**
   * One write: a 16-64 KB chunk (measured 1,270 MB/s against
   * 2.5-27 MB/s for a write per line). It is also what a stalled reader costs
   * in uWS's buffer: producers stop at the first write the socket cannot take
   * (SafWriter.writable), so at most one chunk, plus the one result being
   * written, waits there.
   */
  writeChunkBytes: 64 << 10,
  /** Write chunk once a reader has been slower than the server (saf-writer.ts). */
  slowWriteChunkBytes: 16 << 10,
  /**
   * Most bytes of a write chunk handed to uWS in one cork; a chunk larger is
   * written in pieces of this size, each in a cork of its own. uWS 20.30
   * copies a cork's writes into a 16 KB buffer; a write that does not fit
   * makes it send that buffer first, and when the socket cannot take all of
   * it, the write's own bytes are lost (our reading of AsyncSocket::uncork;
   * uWebSockets.js issue 1005 reports the symptom): the client gets a chunk
   * header without its data. Over TLS, 9 and 11 of 20 answers of 10 MB were
   * broken so (one Node client after another, each slower than the server);
   * plain HTTP gave 20 of 20 right, though the same path is open to it when
   * the kernel's send buffer is full. With these pieces: 30 of 30 right over
   * TLS, and plain HTTP as fast as before (about 100 ms for 10 MB). 12 KB
   * leaves 4 KB of the buffer for the status line, headers and chunk framing
   * that share a cork.
   */
  corkPieceBytes: 12 << 10,
  /** uWS 20.30's cork buffer (see corkPieceBytes). */
  uwsCorkBufferBytes: 16 << 10,
  /**
   * TCP_NOTSENT_LOWAT of every connection: the kernel holds at most about
   * this much unsent per socket and reports it writable below it (see
   * native/socket.cc). Two write chunks keep a fast reader's pipe full.
   */
  socketNotSentLowatBytes: 128 << 10,
  /** compat.md: keep single lines well under 64 KiB (a Go client fails above that). */
  lineBytesMax: 60_000,
  /**
   * serve --shutdown-grace-ms: after SIGTERM, how long open streams may take
   * to hand their reader what is buffered and their terminator. What a
   * stream holds ahead of its terminator is at most one write chunk in uWS
   * and the pending lines (64 KB each), which a 20 KB/s reader takes in
   * about 7 s; a stream still undrained after the grace is cut. Container and
   * unit stop timeouts must exceed it (README "Deploying").
   */
  shutdownGraceMs: 30_000,
  shutdownGraceMsMax: 3_600_000,
  /**
   * An answer to an HTTP/1.0 request is gathered whole and sent with
   * Content-Length (HTTP/1.0 has no chunked encoding, and uWS streams only
   * chunked; server/http10.ts). A default-limit answer (10,000 results) is
   * 0.6-2.5 MB; a larger one ends at this size with a `failed` terminator
   * (STREAM_MESSAGES.HTTP10_TOO_LARGE). Joining and copying it once takes a
   * few ms of the front-end thread.
   */
  http10AnswerBytesMax: 4 << 20,
  /** HTTP/1.0 searches gathered at once (more get 503): they hold up to 32 x 4 MiB, twice over while the last copy is made. */
  http10SearchesInFlightMax: 32,

  // --- ClickHouse data tier (src/clickhouse, search/clickhouse) ---
  /**
   * Longest string literal inlined into a statement, in bytes of its UTF-8
   * form: a pattern or exclude (4096 characters, up to 4 bytes each) or a
   * name fits; escaping at most quadruples it, under the query size below.
   */
  clickhouseLiteralBytesMax: 65_536,
  /** max_query_size sent with every statement (ClickHouse's default, 256 KiB, is below an escaped literal's bound). */
  clickhouseQueryBytesMax: 1 << 20,
  /** Observations per INSERT: large enough that a part per INSERT stays cheap for the MergeTree, small enough to bound memory. */
  clickhouseInsertRowsMax: 100_000,
  /** Bytes of RowBinary per INSERT, whichever comes first. */
  clickhouseInsertBytesMax: 32 << 20,
  /** A ClickHouse query runs at most this long (max_execution_time), like a local scan (searchTimeoutMs). */
  clickhouseQuerySecondsMax: 120,
  /**
   * Longest line of a streamed ClickHouse answer (one row: an RRset's texts
   * for a lookup, a value and its types for a flexible search); a longer
   * one fails the search. No row of our data comes near it (an NDJSON line,
   * ingestLineBytesMax, is the largest RRset ingest takes in one piece, and
   * JSON escaping at most quadruples it); it stops a broken answer from
   * growing one row in memory without end (lib/line-reader.ts).
   */
  clickhouseRowBytesMax: 16 << 20,
  /** Batches of a ClickHouse answer held for the merge before the answer is paused (backpressure; search/clickhouse). */
  clickhouseBatchesBuffered: 4,
  /** Rows of a ClickHouse lookup answer held for the merge before the answer is paused. */
  clickhouseLookupRowsBuffered: 4_096,
  /** ClickHouse SELECTs one server runs at once; a search beyond them gets 503 (OVERLOADED). */
  clickhouseQueriesInFlightMax: 64,
  /** How long to wait for ClickHouse to accept a connection or answer a statement's headers. */
  clickhouseConnectTimeoutMs: 10_000,

  // --- Concurrency ---
  /** Searches waiting for a worker beyond this answer 503 rather than queue without bound. */
  poolQueueMax: 256,
  /**
   * Streams open at once across all keys: searches and watches. 2,048 since
   * watches (below) hold theirs for hours: up to watchesMax of them leave
   * 1,048 to searches, the 1,024 there were before, plus room.
   */
  searchesInFlightMax: 2_048,

  // --- Standing watches (GET .../watch/...; src/search/watch-hub.ts) ---
  /**
   * Watches one server process holds open (503 OVERLOADED past it). Idle,
   * a watch costs its stream, a queue and its pattern's place in a shared
   * RE2 set; each published shard is matched once for all of them
   * (bench/watch.ts: 1,000 watches).
   */
  watchesMax: 1_000,
  /**
   * Distinct patterns compiled into one RE2.Set. One set of 1,000 simple
   * patterns scans names fastest (0.08 us a name, warm), but its compile
   * holds the thread 7 ms, and patterns with counted repeats make one large
   * set thrash its DFA (10 us a name at 1,000, 3.5 us in sets of 64, their
   * compile at most 6 ms): 64 keeps each compile, done one set per turn,
   * within a few ms, at 0.7 us a name for 1,000 simple patterns.
   */
  watchPatternsPerSet: 64,
  /**
   * Front-end thread time a watch's matching (a published shard against
   * every watch, a catch-up over the published data) spends before it gives
   * the thread a turn (lib/turns.ts): the few ms a request may hold it.
   */
  watchSliceMs: 2,
  /**
   * Bytes of result lines one watch holds for a reader that does not keep
   * up (the socket pushes back): about 4,000 lines. Past it the watch ends
   * `failed` (STREAM_MESSAGES.WATCH_BEHIND) and the client resumes from the
   * last time_first it read: memory stays bounded whatever the feed does.
   */
  watchQueueBytesMax: 512 << 10,
  /**
   * A watch's `{}` keep-alive comes after this long with nothing sent (or
   * --keepalive-ms, if longer): a watch is mostly silent, and a keep-alive
   * a second per watch was a third of what 1,000 idle watches cost their
   * server (9 against 4 ms of CPU a second, bench/watch.ts); common proxies
   * drop a stream only after 60 s of silence.
   */
  watchKeepAliveMsMin: 10_000,
  /**
   * Tuples a catch-up (time_first_after in the past) gathers and sorts by
   * time_first before it streams them: the earliest this many (or `limit`,
   * if smaller), about 100 bytes each. Past it the earliest are sent and
   * the watch ends `failed` (STREAM_MESSAGES.WATCH_CATCH_UP_TOO_LARGE):
   * resuming from the last time_first received takes up the rest.
   */
  watchCatchUpTuplesMax: 10_000,
  /**
   * With --clickhouse-url, the tier is asked this often for tuples first
   * seen since the last poll, one query per target for every watch of the
   * process: a tuple reaches its watches within this long of being
   * ingested, plus the query's own time.
   */
  watchClickhousePollMs: 1_000,
  /**
   * With --clickhouse-url, how far back (seconds before now) each poll
   * looks: a tuple ingested this long after it was first seen is still
   * found. The tuples seen in that window are remembered (one entry each),
   * so that a poll delivers only what the last one had not.
   */
  watchClickhouseLagSeconds: 300,

  // --- Shards and ingest ---
  /** A running server checks the manifest this often even when fs.watch says nothing (some filesystems never do). */
  manifestPollMs: 1_000,
  /** After fs.watch reports the manifest renamed, wait this long for the writer's rename and fsync to settle. */
  manifestSettleMs: 20,
  /**
   * Threads that verify shards before they are served, at start-up and at
   * each reload (a file each; CRC-32 runs at ~5.9 GB/s a thread), never more
   * than cores.
   */
  shardOpenThreadsMax: 4,
  /**
   * Shards a manifest may list (a larger one is refused): the mmap addon's
   * fault table holds 16,384 mappings, and 100 M RRsets compact into a few
   * dozen shards, so this is room for thousands of unmerged flushes.
   */
  shardsMax: 16_384,
  /**
   * The background scrub's default read rate (serve --scrub-mib-per-s): a
   * pass over 20 GB of shards takes about 5 minutes at 64 MiB/s and costs
   * about 1 % of a core in CRC-32 (~5.9 GB/s), leaving the disk to searches.
   */
  scrubBytesPerSecond: 64 * 1_048_576,
  /** --scrub-mib-per-s above this is a typo (no disk reads 64 GiB/s). */
  scrubMibPerSecondMax: 65_536,
  /** A scrub pass starts at most this often, so that a small data set is not re-read in a loop. */
  scrubPassIntervalMs: 600_000,
  /** The scrub reads this much at a time (one read, one CRC-32 call). */
  scrubChunkBytes: 1_048_576,
  /** Quarantined shards /readyz names one by one; past this it says how many more (a body stays one short line). */
  quarantineNamedMax: 8,
  /** A writer (ingest, compact) waits this long for the manifest lock before giving up. */
  manifestLockWaitMs: 60_000,
  manifestLockPollMs: 50,
  /** Progress reports of a parallel ingest, for the progress bar. */
  ingestProgressIntervalMs: 200,
  /** FlatBuffers offsets are 32-bit; stay well below 2 GiB per shard file. */
  shardBytesMax: 1_500_000_000,
  /**
   * RRsets per shard at most. Row numbers are 32-bit, and shardBytesMax binds
   * first (about 200 bytes an RRset on disk: 7.5 M RRsets in 1.5 GB); a
   * compaction sizes its shards from its memory bound below that.
   */
  shardRrsetsMax: 16_000_000,
  /**
   * Anonymous memory a merge holds per RRset of the output shard it builds:
   * the table (~184 B with its slack) and the finished shard's arrays
   * (~200 B) before they are written; 430 B measured for a merge of 1 M
   * RRsets into one shard (node dist/bench/ingest.js --merge-shards 4
   * --merge-shard-rrsets 250000), rounded up.
   */
  mergeBytesPerRrsetHeld: 480,
  /** What a compaction process holds besides its merges' tables (V8, inputs' cursors, the manifest): kept out of its budget. */
  compactBaseBytes: 256 << 20,
  /** `compact --memory-mb` by default: 4 GiB, which at mergeBytesPerRrsetHeld is shards of about 8 M RRsets on one thread. */
  compactMemoryBytesDefault: 4096 * 1_048_576,
  /**
   * The shard size a default compaction aims at: enough threads for the
   * memory bound at this size each (at 4 GiB, one): few, large shards are
   * what make searches cheap at 100 M RRsets, and a thread more halves them.
   */
  compactShardRrsetsTarget: 6_000_000,
  /**
   * The writer refuses a shard whose size estimate (src/shard/writer/flatbuffer.ts,
   * which over-counts) reaches shardBytesMax times this: 1.5 GB x 1.1 = 1.65 GB.
   */
  shardBytesEstimateSlackRatio: 1.1,
  /**
   * Records joined into one string and written to a blob at once (writer/blobs.ts):
   * one join and one write per batch, not per record. The batch string is
   * 4,096 x (record + newline): at most 4,096 x 255 B = 1 MiB of owner
   * names; rdata texts are bounded only by what ingest accepts (an NDJSON
   * line, ingestLineBytesMax), so a batch of very long TXT texts is larger.
   */
  blobWriteBatchRecords: 4_096,
  /**
   * An owner's RRsets up to this many are put in shard order by insertion
   * (at most 16 x 15 / 2 = 120 comparisons), more by TypedArray sort
   * (rrset-order.ts): most owners have a handful, where insertion saves
   * the sort call's overhead, and a busy owner stays n log n.
   */
  insertionSortRrsetsMax: 16,
  /** Default in-memory aggregation budget for ingest, in RRsets, before a run spills to a shard. */
  ingestRrsetsInMemoryMax: 2_000_000,
  /** A single NDJSON line or zone-file logical line longer than this is rejected. */
  ingestLineBytesMax: 1 << 20,
  /** One read of an input file while it is hashed for the input ledger (lib/file-digest.ts); the one buffer it holds. */
  inputDigestReadBytes: 1 << 20,
  /**
   * Input files the ledger of a data directory remembers (shard/ledger.ts),
   * over all its manifest's shard entries. Past it the oldest are forgotten,
   * with a warning: a file that old is ingested again if it is given again.
   * Servers parse the manifest on their front-end thread at every reload,
   * so it must stay small: 10,000 entries with 60-character paths are 2.4 MiB
   * and about 4 ms of JSON.parse (`npx vitest run test/unit/shard/ledger.test.ts`
   * prints the figure).
   */
  ledgerInputsMax: 10_000,
  /** A ledger entry keeps at most this many characters of its file's path (the rest is cut). */
  ledgerNameCharsMax: 256,
  /**
   * How long a ClickHouse ingest waits to see its own `started` row in the
   * ledger before it decides whether it is the run that sends a file
   * (clickhouse/ledger.ts claim: a replica read may lag the write).
   */
  ledgerClaimWaitMs: 10_000,
  ledgerClaimPollMs: 50,
  /** Runs of one file a claim reads (each is a run that started it and did not withdraw: a handful at most). */
  ledgerRunsReadMax: 1_000,

  // --- Keys, licences and quotas (src/auth; spec sections 5 and 8) ---
  /** An API key is hex digits or dashes; below 16 characters it is guessable, above 256 it is not a key. */
  apiKeyCharsMin: 16,
  apiKeyCharsMax: 256,
  /** Spec 8: the trial licence returns at most 12 results per query. */
  trialResultsMax: 12,
  /** Default offset_max of a subscription, as a multiple of its results_max (the hourly trial gets no offsets). */
  offsetMaxPerResultsMax: 10,
  /** A sliding-window burst log keeps one timestamp per request (8 bytes each): 1,000 keeps a row under 8 KiB. */
  burstSizeMax: 1_000,
  /** Longest burst window: 31 days. */
  burstWindowSecMax: 31 * 86_400,
  /** Per-key concurrent request cap ceiling; searchesInFlightMax bounds the whole process anyway. */
  keyConcurrentMax: 1_024,
  /** CIDRs in one key's client address allow list. */
  allowCidrsMax: 64,
  /**
   * Licences read from the store are reused this long: revoking an unlimited key takes effect within it
   * (charged keys re-read their row in every charge).
   */
  licenceCacheTtlMs: 1_000,
  /** Licences held in the cache; above this the cache is cleared rather than grown. */
  licenceCacheEntriesMax: 10_000,
  /** Charges decided in one group-commit transaction; more in one event-loop turn wait for the next transaction. */
  chargeBatchMax: 4_096,
  /** Charges waiting for a transaction; beyond this AccessGate.charge() answers 503 OVERLOADED instead of queueing without bound. */
  chargesPendingMax: 65_536,
  /** How long a process waits for another process's write transaction on keys.sqlite before answering 503. */
  keyStoreBusyTimeoutMs: 5_000,
  /** Usage of unlimited keys (enforced nowhere, shown by `keys show`) is written at most this often. */
  usageFlushIntervalMs: 1_000,
  /**
   * A running server checks that DIR/keys.sqlite is still the file it opened (one stat: its device and inode)
   * this often, besides fs.watch's word: a store replaced, deleted or restored under it is noticed within this
   * long, never by a stat per request. Until then requests are answered from the file it had open.
   */
  keyStoreCheckMs: 1_000,
  /** After fs.watch reports keys.sqlite renamed or deleted, wait this long for the operator's mv to settle. */
  keyStoreSettleMs: 20,
  /**
   * How long opening keys.sqlite waits for another process that is opening it (each holds keys.sqlite.open.lock
   * while it pairs the file with its -wal and -shm and migrates it). One holder may wait keyStoreBusyTimeoutMs
   * for SQLite's write lock in its migration, so this must be longer.
   */
  keyStoreOpenLockWaitMs: 10_000,
  /** Between two tries of that lock; a running server that finds it held retries this soon (its store is closed meanwhile). */
  keyStoreOpenLockPollMs: 10,
  /**
   * A Redis command (a charge script included) that has no reply after this long fails, and the request gets
   * 503 OVERLOADED: a stopped or hung Redis must not hold requests open. A batch script of chargeBatchMax
   * charges runs in a few ms.
   */
  redisCommandTimeoutMs: 2_000,
  /** Opening a TCP connection to Redis; beyond it the attempt counts as failed and the client tries again. */
  redisConnectTimeoutMs: 2_000,
  /**
   * Longest pause between two reconnection attempts to an unreachable Redis (the pause grows from 50 ms to
   * this): a front end serves again within about this long after Redis returns.
   */
  redisReconnectDelayMsMax: 500,
  /**
   * Time to live of a concurrency lease in Redis (--max-concurrent shared by every front end on one Redis): the
   * slots of a front end killed with requests in flight come back within this long.
   */
  concurrencyLeaseTtlMs: 10_000,
  /** A front end renews the leases it holds this often, so a stream longer than the time to live keeps its slot. */
  concurrencyLeaseRenewMs: 3_000,

  // --- Process groups: serve --processes N (src/server/process-group.ts) ---
  /** Front-end processes one `serve` may run; more than one per core only adds context switches. */
  groupProcessesMax: 64,
  /** A member that dies unexpectedly is started again after this pause. */
  groupRestartDelayMs: 1_000,
  /** More unexpected deaths than this within groupRestartWindowMs is a crash loop: the group stops, exit 1. */
  groupRestartsMax: 5,
  groupRestartWindowMs: 60_000,
  /**
   * A member still running this long after its shutdown grace
   * (--shutdown-grace-ms, which it was given too) is killed: the grace
   * bounds its streams, this its backend and key store closing after them.
   */
  groupStopMarginMs: 5_000,
  /** A member's answer to its supervisor's scrape (serve --processes N --metrics-port P); later, the scrape says it is missing. */
  groupScrapeTimeoutMs: 2_000,
  /** A member that does not listen within this long after it was forked is a failed start. */
  groupStartTimeoutMs: 120_000,

  // --- Sensor ingest: pcap, pcapng, dnstap (src/ingest/pcap/, dnstap.ts) ---
  /** One fs read of a capture file; records straddling two reads are carried over, never re-read. */
  sensorReadChunkBytes: 1 << 20,
  /** Captured bytes of one packet; tcpdump's largest snaplen is 262,144, anything above is a corrupt record. */
  pcapPacketBytesMax: 262_144,
  /** One pcapng block (headers, packet, options); the packet bound plus room for options. */
  pcapngBlockBytesMax: 1 << 20,
  /** Stacked 802.1Q / 802.1ad tags read on one Ethernet frame (QinQ is 2; 4 leaves room). */
  vlanTagsMax: 4,
  /** IPv6 extension headers skipped before giving up on a packet. */
  ipv6ExtensionHeadersMax: 8,
  /** Datagrams being reassembled at once; the oldest is dropped beyond this. A 64 KiB DNS response in 1,280-byte fragments is 52 pieces. */
  ipDatagramsReassemblingMax: 4_096,
  /** Fragments held for one datagram; more is an attack or a bug, and the datagram is dropped. */
  ipFragmentsPerDatagramMax: 64,
  /** An unfinished datagram older than this in capture time is dropped (Linux ipfrag_time is 30 s). */
  ipFragmentTimeoutSec: 30,
  /** Largest reassembled IP payload: the 16-bit total length. */
  ipDatagramBytesMax: 65_535,
  /** TCP directions (4-tuples) reassembled at once; the least recently used is dropped beyond this. */
  tcpStreamsOpenMax: 8_192,
  /** Bytes buffered in one TCP direction (in-order remainder plus out-of-order segments): two 64 KiB DNS messages and their prefixes. */
  tcpStreamBytesMax: 131_076,
  /**
   * Buffer a TCP direction starts with; it doubles as messages need, up to
   * tcpStreamBytesMax. Most DNS streams carry one small message, so 1 KiB
   * keeps 8,192 open directions at 8 MiB.
   */
  tcpStreamBufferInitialBytes: 1_024,
  /**
   * A TCP direction silent this long in capture time is dropped (worst case held: 8,192 x 128 KiB = 1 GiB;
   * typical DNS streams hold < 1 KiB).
   */
  tcpStreamIdleSec: 60,
  /**
   * One Frame Streams data frame; a dnstap message is at most two 64 KiB DNS
   * messages plus addresses. The frame and its 4-byte length must fit one
   * read chunk, hence 4 bytes under sensorReadChunkBytes.
   */
  dnstapFrameBytesMax: (1 << 20) - 4,
  /** fstrm's own bound on a control frame (FSTRM_CONTROL_FRAME_LENGTH_MAX). */
  dnstapControlFrameBytesMax: 512,

  // --- Live dnstap receiver (rrscan ingest --listen; src/ingest/live/) ---
  /**
   * Senders connected at once over every --listen address (`--senders-max`
   * lowers it; it is also the ceiling). At the cap a new connection takes
   * the slot of a sender silent for --sender-idle-seconds, or of the oldest
   * handshake when too many are mid-handshake, and is closed, logged, when
   * neither is there (receiver.ts); so silent senders cannot hold every slot.
   */
  liveSendersMax: 1_024,
  /** A sender must finish READY / ACCEPT / START within this long after connecting, or it is closed. */
  liveHandshakeMs: 5_000,
  /**
   * --sender-idle-seconds default: at the sender cap, a started sender that
   * has sent no frame for this long may be closed to admit a new one (the
   * one silent longest goes first). Below the cap nobody is closed for
   * silence: a quiet authority may go minutes between answers, and dnstap
   * has no keep-alive. So a real DNS server that finds the cap held by
   * silent senders is admitted within this long, plus its reconnect interval
   * (BIND's fstrm reopen interval is 5 s); each new sender is safe from that
   * rule for this long after its handshake.
   */
  liveSenderIdleSecondsDefault: 10,
  liveSenderIdleSecondsMax: 3_600,
  /**
   * Senders mid-handshake that are never closed to admit another. At the cap,
   * with no silent sender to close, a new connection closes the oldest
   * handshake once more than this many are under way: connections that never
   * finish their handshake (each held up to liveHandshakeMs) thus cannot hold
   * the cap either, while a real sender's handshake (one round trip) survives
   * unless this many connections arrive during it. Scaled with --senders-max
   * (a sixteenth of the slots, at least 1).
   */
  liveHandshakesMax: 64,
  /** `ingest --allow-cidr` ranges: each connection is matched against every one. */
  liveAllowCidrsMax: 64,
  /**
   * A sender's read buffer starts this size and doubles as a frame needs, up
   * to dnstapFrameBytesMax + 4; 1,024 idle senders hold 64 MiB at most.
   */
  liveReadBufferBytes: 1 << 16,
  /** --flush-seconds default: held RRsets are published as a shard this often. */
  liveFlushSecondsDefault: 10,
  liveFlushSecondsMax: 3_600,
  /**
   * --memory-rrsets default for --listen: held RRsets are published as soon
   * as there are this many. A flush's shard is built on a worker thread
   * while the next budget fills, so the receiver holds up to two budgets:
   * peak RSS 340 MiB at 200,000 (node dist/bench/live-dnstap.js --frames 300000 --transport tcp).
   */
  liveRrsetsInMemoryMax: 200_000,
  /**
   * A failed flush (a full disk) is retried at the next --flush-seconds tick
   * or after this long, whichever comes first: the bound on how long paused
   * senders wait once space is back, when --flush-seconds is long.
   */
  liveFlushRetryMs: 5_000,
  /** Running totals are logged this often (and with every flush). */
  liveTotalsLogMs: 60_000,
  /** Rejected frames of one sender logged one by one; the rest are only counted (and logged at its disconnect). */
  liveRejectsLoggedPerSender: 10,

  // --- DNS codec and zone files (src/dns, src/ingest/zone.ts) ---
  /**
   * Compression pointers followed in one name; pointers must also point backwards, so this only bounds work
   * (a 255-octet name needs at most 127).
   */
  dnsNamePointerJumpsMax: 128,
  /** Nesting of $INCLUDE in zone files; deeper nesting is almost certainly a file including itself. */
  zoneIncludeDepthMax: 16,
  /**
   * $INCLUDEs followed while reading one zone file, at any depth. The depth
   * bound alone lets a file that includes itself twice be read 2^16 times
   * (minutes of work from two lines); real zones include a handful of files.
   */
  zoneIncludesMax: 256,
  /**
   * --include-root directories of one run: each $INCLUDE is checked against
   * every one (a path comparison each), and a zone tree needs one or two.
   */
  zoneIncludeRootsMax: 16,
  /**
   * RRsets one zone file may hold: a file is grouped in memory (about 280
   * bytes per RRset of a TLD-shaped zone with its rdata, ingest/zone-rrsets.ts,
   * so 5 M is about 1.4 GB, before the RRset table it then fills). A larger
   * zone must be split before ingest.
   */
  zoneRrsetsPerFileMax: 5_000_000,
  // --- NDJSON ingest and the demo dataset (src/ingest/ndjson.ts and ndjson-observation.ts, src/demo) ---
  /**
   * The line reader's buffer for an NDJSON or zone file (lib/line-reader.ts):
   * a read fills what a line cut by the previous read (at most
   * ingestLineBytesMax + 1 bytes, its CR) leaves free. 4 MiB amortises the
   * syscall; $INCLUDEs nested zoneIncludeDepthMax deep hold one each.
   */
  lineReadBufferBytes: 4 << 20,
  /**
   * An NDJSON file at least this big is cut into one range of lines per
   * ingest thread. Below it a thread's start-up (about 50 ms) and the extra
   * shard cost more than parsing in one thread.
   */
  ndjsonParallelBytesMin: 32 << 20,
  /** Ingest threads at most (--workers); each holds its share of --memory-rrsets. */
  ingestThreadsMax: 64,
  /**
   * `rrscan compact` waits this long for the compaction running in its
   * directory (its compaction lock) before giving up: a background merge reads
   * fewer than ingestRrsetsInMemoryMax RRsets, about a minute of work (a
   * 1 M-RRset merge took 25 s on the shared 2-core machine:
   * node dist/bench/compaction.js); another full compaction may take longer.
   */
  compactLockWaitMs: 600_000,
  /**
   * A `.writer-<id>.new` file (a writer lock created, not yet locked and
   * renamed) older than this is a killed writer's; younger ones may be a
   * live writer's between its two steps, so a sweep leaves them.
   */
  newWriterLockStaleMs: 60_000,
  /**
   * A background merge that failed (a full disk, a corrupt input) is tried
   * again after a pause that doubles from manifestPollMs up to this.
   */
  compactRetryMsMax: 60_000,
  /** Compaction merges on one thread below this many input RRsets: a thread's start-up would cost more than it saves. */
  compactParallelRrsetsMin: 100_000,
  /** Skipped-record messages a parallel ingest thread keeps to report; the count is always exact. */
  ingestRejectsReportedMax: 1_000,
  /** Records in one NDJSON RRset (`rdata` array); the largest real RRsets (root NS, big TXT sets) hold tens. */
  ndjsonRdataPerLineMax: 4_096,
  /** Latest time an NDJSON record may carry, 2100-01-01: larger values are milliseconds or garbage, not seconds. */
  ndjsonEpochSecMax: 4_102_444_800,
  /** RRsets `rrscan demo --records` may ask for: 100 M is about 40 GB of shards, far beyond a demo. */
  demoRecordsMax: 100_000_000,
  /**
   * Demo data sets from this many RRsets up are made on one thread per core
   * (demo/demo-part.ts); below, starting the threads costs more than they save.
   */
  demoParallelRrsetsMin: 200_000,
  /**
   * Threads a demo run takes at most. Each runs the whole generator (about
   * 1.2 s and 57 MiB of its own state at 1 M RRsets) and aggregates its part,
   * so past eight the generator is most of every thread's work.
   */
  demoThreadsMax: 8,

  // --- Operator knobs of `rrscan serve` (src/cli/main.ts) ---
  /** `--workers`: scan threads; each costs a V8 isolate (~10 MB) and a core is the useful ceiling, so more than this is a typo. */
  scanThreadsMax: 256,
  /** `--queue-max`: scan tasks waiting for a worker; each holds a few hundred bytes until it runs. */
  poolQueueMaxCeiling: 65_536,
  /** `--keepalive-ms` floor: SafWriter checks every max(10, interval / 2) ms, so a shorter interval only adds `{}` lines. */
  keepAliveMsMin: 10,
  /** `--keepalive-ms` ceiling: common proxies drop an idle stream after 60 s. */
  keepAliveMsMax: 60_000,

  // --- The web console's static files (src/server/console-files.ts), held in memory for the server's life ---
  /** One file; the page, its script and its style are each a few tens of KB. */
  consoleFileBytesMax: 1 << 20,
  /** All of them together. */
  consoleBytesMax: 4 << 20,
  /** Files served: the page, a style sheet and a handful of compiled modules. */
  consoleFilesMax: 32,
});

/** Asserts the relations between limits (of `L`: tests pass an edited copy); throws naming the one broken. */
export function checkLimits(L: { readonly [K in keyof typeof LIMITS]: number } = LIMITS): void {
  assert.ok(L.ingestLineBytesMax + 1 < L.lineReadBufferBytes, 'a line of an ingest file and its CR must leave room for a read');
  assert.ok(L.resultsDefault <= L.resultsMaxCeiling, 'resultsDefault must not exceed resultsMaxCeiling');
  assert.ok(L.scanCreditsMax * L.batchItemsMax > L.resultsDefault, 'a default-limit answer must fit a task\'s credits');
  assert.ok(L.slowWriteChunkBytes <= L.writeChunkBytes && L.lineBytesMax < L.slowWriteChunkBytes * 4, 'the slow chunk is the smaller one');
  assert.ok(L.lineBytesMax < 64 * 1024, 'lines must stay under 64 KiB (compat.md)');
  assert.ok(L.lineBytesMax < L.writeChunkBytes, 'one line must fit in one write chunk');
  assert.ok(L.corkPieceBytes + 4096 <= L.uwsCorkBufferBytes, 'a cork\'s piece, headers and framing must fit uWS\'s cork buffer');
  assert.ok(L.shardBytesMax < 2 ** 31, 'FlatBuffers offsets are signed 32-bit');
  assert.ok(L.shardRrsetsMax < 2 ** 32, 'row numbers are 32-bit');
  assert.ok(L.compactMemoryBytesDefault > L.compactBaseBytes + L.mergeBytesPerRrsetHeld * 1_000,
    'the default compaction budget must hold a shard of some size');
  assert.ok(L.shardBytesMax * L.shardBytesEstimateSlackRatio < 2 ** 31,
    'the largest shard the writer lets through must fit signed 32-bit offsets');
  assert.ok(L.keepAliveMs < L.searchTimeoutMs, 'keep-alives must come before the search timeout');
  assert.ok(L.searchTimeoutMsMin <= L.searchTimeoutMs && L.searchTimeoutMs <= L.searchTimeoutMsMax,
    'the search timeout default must lie in its bounds');
  assert.ok(L.pageGroupsPerTurn >= 1 && L.lookupRowsPerTurn >= 1, 'a turn must make progress');
  assert.ok(L.batchItemsMax > 0 && L.poolQueueMax > 0, 'batches and queue must be positive');
  assert.ok(L.apiKeyCharsMin >= 16 && L.apiKeyCharsMin < L.apiKeyCharsMax, 'API key length bounds must be sane');
  assert.ok(L.trialResultsMax <= L.resultsDefault && L.resultsDefault <= L.resultsMaxCeiling,
    'trial results_max must not exceed the default');
  assert.ok(L.concurrencyLeaseRenewMs * 2 < L.concurrencyLeaseTtlMs, 'a lease must be renewed twice within its time to live');
  assert.ok(L.chargeBatchMax > 0 && L.chargeBatchMax <= L.chargesPendingMax, 'a charge batch must fit the pending queue');
  assert.ok(L.keyConcurrentMax <= L.searchesInFlightMax, 'a per-key cap above the process cap means nothing');
  assert.ok(L.watchesMax * 2 <= L.searchesInFlightMax, 'watches may hold at most half the streams, so searches keep the rest');
  assert.ok(L.watchPatternsPerSet >= 1 && L.watchSliceMs > 0 && L.watchCatchUpTuplesMax >= 1, 'watch matching must make progress');
  assert.ok(L.watchQueueBytesMax > L.lineBytesMax * 2, 'a watch\'s queue must hold the longest line');
  assert.ok(L.watchKeepAliveMsMin <= L.keepAliveMsMax, 'a watch\'s keep-alive must come before proxies time it out');
  assert.ok(L.watchClickhouseLagSeconds * 1000 > L.watchClickhousePollMs, 'a ClickHouse watch looks back further than one poll');
  assert.ok(L.keyStoreOpenLockWaitMs > L.keyStoreBusyTimeoutMs, 'an open must outwait one holder\'s migration waiting for SQLite');
  assert.ok(L.keyStoreOpenLockPollMs < L.keyStoreCheckMs && L.keyStoreSettleMs < L.keyStoreCheckMs,
    'a reopen retried or nudged by fs.watch must come before the next periodic check');
  assert.ok(L.pcapPacketBytesMax < L.pcapngBlockBytesMax && L.pcapngBlockBytesMax <= L.sensorReadChunkBytes,
    'a pcapng block must fit one read chunk');
  assert.ok(L.tcpStreamBytesMax >= 2 * (65_535 + 2), 'a TCP direction must hold two whole DNS messages');
  assert.ok(L.tcpStreamBufferInitialBytes > 0 && L.tcpStreamBufferInitialBytes <= L.tcpStreamBytesMax,
    'a TCP direction must start within its bound');
  assert.ok(L.dnstapFrameBytesMax + 4 <= L.sensorReadChunkBytes, 'a dnstap frame and its length must fit one read chunk');
  assert.ok(L.keepAliveMsMin <= L.keepAliveMs && L.keepAliveMs <= L.keepAliveMsMax &&
    L.keepAliveMsMax < L.searchTimeoutMs, 'the keep-alive default must lie in its bounds, below the search timeout');
  assert.ok(L.poolQueueMax <= L.poolQueueMaxCeiling, 'the queue default must not exceed its ceiling');
  assert.ok(L.clickhouseRowBytesMax >= 4 * L.ingestLineBytesMax, 'a row of one ingested line, escaped, must fit an answer line');
  assert.ok(L.clickhouseLiteralBytesMax * 4 < L.clickhouseQueryBytesMax / 2, 'an escaped literal must fit a statement with room to spare');
  assert.ok(L.liveHandshakesMax * 2 <= L.liveSendersMax, 'connections mid-handshake must never hold most of the sender slots');
  assert.ok(L.liveSenderIdleSecondsDefault <= L.liveSenderIdleSecondsMax, 'the idle default must lie in its bounds');
  assert.ok(L.http10AnswerBytesMax > L.lineBytesMax * 2 && L.http10SearchesInFlightMax <= L.searchesInFlightMax,
    'an HTTP/1.0 answer must hold a line and its terminator, and its streams are streams');
  assert.ok(L.shutdownGraceMs <= L.shutdownGraceMsMax && L.groupStopMarginMs > 0,
    'the shutdown grace default must lie in its bounds, and a member must get time past it to close');
  assert.ok(L.scanSliceMs > 0 && L.scanSliceMs * 10 <= 50 && L.scanCreditWaitMs > 0, 'a cancel must be seen well within 50 ms');
}

checkLimits();
