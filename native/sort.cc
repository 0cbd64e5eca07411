// rrscan_sort: sort byte-string records natively, and gather records of a
// blob in a given order, for the shard writer.
//
// Why native: the writer sorts every owner name (reversed and forward), every
// rdata value and every RRset key of a shard. V8 sorts 500,000 names in
// about 650 ms (1.4 s when it must also carry the row index along), because
// each comparison walks two heap strings; std::sort over one byte blob with
// memcmp does the same in a small fraction of that. The comparison is the
// one the shard format promises (schema/FORMAT.md): unsigned bytes, a
// shorter record before any record it is a prefix of, which for the
// printable ASCII of names and rdata is exactly JavaScript's string order.
//
// sortRecords(bytes: Uint8Array, offsets: Uint32Array, tiebreak?: Uint32Array)
//   -> Uint32Array order
// Record i is bytes[offsets[i] .. offsets[i+1]); there are offsets.length - 1
// records. Equal records are ordered by tiebreak[i] (when given), then by i,
// so the order is total and the same on every run.
#include <node.h>
#include <v8.h>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace {

void ThrowType(v8::Isolate* isolate, const char* message) {
  isolate->ThrowException(v8::Exception::TypeError(
      v8::String::NewFromUtf8(isolate, message).ToLocalChecked()));
}

template <typename T>
T* DataOf(v8::Local<v8::ArrayBufferView> view) {
  auto store = view->Buffer()->GetBackingStore();
  return reinterpret_cast<T*>(static_cast<uint8_t*>(store->Data()) + view->ByteOffset());
}

// How SortRecords sorts, and why.
//
// Records are compared 7 bytes at a time, through a 64-bit key per record:
// the 7 bytes (the record's "chunk" at some depth) big-endian in the top 56
// bits, and in the low byte how many of them the record has (0..6), or 7
// when it has all 7 (and may go on). Integer order on keys is the record
// order on the chunk: a record that ends inside the chunk is zero-padded, so
// it sorts before any record that goes on with a non-zero byte there;
// against one that goes on with real 0x00 bytes (rdata wire bytes have
// them) the padding compares equal and the low byte, the shorter length,
// puts the prefix first. So equal keys with a low byte below 7 are equal
// records, and equal keys with a low byte of 7 are undecided: just those
// records get their next chunk loaded into their keys and that run is sorted
// again, and so on (MSD by chunks). A record's bytes are read once per chunk
// that matters, where the comparison sort this replaces memcmp'd two
// records' bytes at every comparison, a cache miss each (the blob is far
// larger than the cache).
//
// Within one depth, items are sorted by key with an MSD radix sort, a key
// byte at a time from the top, skipping bytes that are the same across the
// part being sorted ("com." of reversed names, the zero bytes of fixed-size
// keys), down to parts of fewer than kRadixMin items, which std::sort
// finishes. A large part whose keys differ in only a few bytes (IPv4 wire
// bytes: 3) is LSD-sorted instead: MSD would leave thousands of small parts
// for std::sort, its slowest step.
//
// Ties: the items start in (tiebreak, index) order, every scatter is stable
// and std::sort breaks equal keys by (tiebreak, index), so equal records end
// in that order with no pass of their own.
//
// Against the sort this replaced (LSD radix on an 8-byte prefix, then
// std::sort with memcmp over each run of equal prefixes), `node
// dist/bench/micro/record-sort.js --baseline <a build of that>` on 2 M
// records of each kind the writer sorts, same orders: 0.73 s against 2.58 s
// for the five sets, from 1.5x faster (IPv4 wire bytes) through 2.2x
// (reversed names) to 7x (16-byte keys with a long shared prefix), on a busy
// 2-vCPU Xeon.

// 12 bytes, not 16: every pass moves items, and the buffers' first touch
// (page faults) costs in proportion too.
struct __attribute__((packed)) Item {
  uint64_t key;
  uint32_t index;  // the record
};

struct Records {
  const uint8_t* bytes;
  size_t byteLength;
  const uint32_t* offsets;

  // The key of record i's chunk at bytes depth .. depth + 7 (see above).
  // The record has at least depth bytes.
  uint64_t KeyAt(uint32_t i, uint32_t depth) const {
    uint32_t start = offsets[i] + depth;
    uint32_t rem = offsets[i + 1] - start;
    uint64_t chunk;
    if (start + size_t{8} <= byteLength) {
      std::memcpy(&chunk, bytes + start, 8);  // may read past the record: the mask below drops those bytes
      chunk = BigEndian(chunk);
    } else {
      chunk = 0;
      for (uint32_t k = 0; k < 8; k++) chunk = (chunk << 8) | (k < rem ? bytes[start + k] : 0);
    }
    if (rem >= 7) return (chunk & ~uint64_t{0xff}) | 7;
    uint64_t keep = rem == 0 ? 0 : ~uint64_t{0} << (64 - 8 * rem);
    return (chunk & keep) | rem;
  }

  static uint64_t BigEndian(uint64_t x) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return __builtin_bswap64(x);
#else
    return x;
#endif
  }
};

// Parts below this many items are sorted with std::sort rather than split by
// radix: a split's fixed cost (256 counts, prefix sums, a copy back) then
// outweighs the comparisons.
constexpr size_t kRadixMin = 32;
// Parts of at least this many items whose keys differ in few bytes are
// LSD-sorted (see above).
constexpr size_t kLsdMin = 4096;
// How many items ahead LoadKeys prefetches a record's offsets (and half as
// far ahead its bytes).
constexpr size_t kAhead = 16;

// Items items[lo, hi).
struct Span {
  size_t lo, hi;
};

class Sorter {
 public:
  Sorter(const Records& r, const uint32_t* tiebreak, size_t n)
      : r_(r), tiebreak_(tiebreak), n_(n),
        // Not vectors: no zeroing pass over them.
        bufferA_(new Item[n]), bufferB_(new Item[n]), second_(new uint64_t[n]) {
    items_ = bufferA_.get();
    tmp_ = bufferB_.get();
  }

  // Writes to order[0, n) the records' indexes in sorted order.
  void Sort(uint32_t* order) {
    if (n_ == 0) return;
    FirstItems();
    // Runs of items with equal records up to depth, their keys loaded at
    // depth, still to sort. A stack, not recursion: a long rdata value
    // shared by many records would otherwise recurse once per 7 bytes, too
    // deep for a worker thread's stack.
    struct Level {
      Span span;
      uint32_t depth;
    };
    std::vector<Level> todo{Level{Span{0, n_}, 0}};
    std::vector<Span> runs;
    while (!todo.empty()) {
      Level g = todo.back();
      todo.pop_back();
      runs.clear();
      SortByKey(g.span, runs);
      if (runs.empty()) continue;
      uint32_t depth = g.depth + 7;
      LoadKeys(runs, depth);
      for (const Span& s : runs) todo.push_back(Level{s, depth});
    }
    for (size_t i = 0; i < n_; i++) order[i] = items_[i].index;
  }

 private:
  // Fills items_ in (tiebreak, index) order, with their keys at depth 0, and
  // second_[index] with the key at depth 7: loaded now, while the blob is
  // read in order, it spares the first level of LoadKeys two cache misses a
  // record (names are mostly longer than 7 bytes).
  void FirstItems() {
    size_t n = n_;
    Item* items = items_;
    int varying[4], passes = 0;
    size_t counts[4][256] = {};
    if (tiebreak_ != nullptr) {
      for (size_t i = 0; i < n; i++) {
        uint32_t t = tiebreak_[i];
        for (int b = 0; b < 4; b++) counts[b][(t >> (8 * b)) & 0xff]++;
      }
      for (int b = 0; b < 4; b++) {
        if (counts[b][(tiebreak_[0] >> (8 * b)) & 0xff] != n) varying[passes++] = b;
      }
    }
    if (passes == 0) {
      for (size_t i = 0; i < n; i++) items[i].index = static_cast<uint32_t>(i);
    } else {
      // Stable LSD radix sort by tiebreak over its bytes that vary: the
      // tiebreaks are rrtypes, so usually one pass.
      Item* from = tmp_;
      Item* to = items;
      if (passes % 2 == 0) std::swap(from, to);  // so that the last pass writes items
      for (int p = 0; p < passes; p++) {
        int shift = 8 * varying[p];
        size_t* c = counts[varying[p]];
        size_t sum = 0;
        for (int d = 0; d < 256; d++) {
          size_t x = c[d];
          c[d] = sum;
          sum += x;
        }
        for (size_t i = 0; i < n; i++) {
          uint32_t index = p == 0 ? static_cast<uint32_t>(i) : from[i].index;
          to[c[(tiebreak_[index] >> shift) & 0xff]++].index = index;
        }
        std::swap(from, to);
      }
    }
    for (size_t i = 0; i < n; i++) {
      uint32_t index = items[i].index;
      uint64_t key = r_.KeyAt(index, 0);
      items[i].key = key;
      second_[index] = (key & 0xff) == 7 ? r_.KeyAt(index, 7) : 0;
    }
  }

  // Loads the key at depth of every item of runs. Their records are all
  // over the blob: prefetching kAhead items ahead keeps many of those cache
  // misses in flight at once rather than one after the other.
  void LoadKeys(const std::vector<Span>& runs, uint32_t depth) {
    struct Cursor {  // walks the items of runs in order
      const std::vector<Span>& runs;
      size_t run, at;
      bool Done() const { return run == runs.size(); }
      void Next() {
        if (++at == runs[run].hi && ++run < runs.size()) at = runs[run].lo;
      }
    };
    Cursor load{runs, 0, runs[0].lo}, far{runs, 0, runs[0].lo}, near{runs, 0, runs[0].lo};
    if (depth == 7) {
      for (size_t k = 0; k < kAhead && !near.Done(); k++) near.Next();
      for (; !load.Done(); load.Next()) {
        if (!near.Done()) {
          __builtin_prefetch(&second_[items_[near.at].index]);
          near.Next();
        }
        items_[load.at].key = second_[items_[load.at].index];
      }
      return;
    }
    // Two stages: a record's offsets kAhead items ahead, its bytes (whose
    // address needs the offsets) half as far.
    const uint32_t* offsets = r_.offsets;
    for (size_t k = 0; k < kAhead && !far.Done(); k++) {
      __builtin_prefetch(&offsets[items_[far.at].index]);
      far.Next();
      if (k >= kAhead / 2) near.Next();
    }
    for (; !load.Done(); load.Next()) {
      if (!far.Done()) {
        __builtin_prefetch(&offsets[items_[far.at].index]);
        far.Next();
      }
      if (!near.Done()) {
        __builtin_prefetch(r_.bytes + offsets[items_[near.at].index] + depth);
        near.Next();
      }
      items_[load.at].key = r_.KeyAt(items_[load.at].index, depth);
    }
  }

  // Sorts the items of whole by key, then (tiebreak, index), and appends to
  // runs its runs of two or more equal keys whose records go on past the key
  // (low byte 7).
  void SortByKey(Span whole, std::vector<Span>& runs) {
    std::vector<Part>& todo = parts_;
    todo.assign(1, Part{whole, 7});
    while (!todo.empty()) {
      Part g = todo.back();
      todo.pop_back();
      Item* a = items_ + g.span.lo;
      size_t m = g.span.hi - g.span.lo;
      if (m < kRadixMin) {
        std::sort(a, a + m, [&](const Item& x, const Item& y) { return x.key != y.key ? x.key < y.key : TieLess(x.index, y.index); });
        AddRuns(g.span, runs);
        continue;
      }
      // The bits where some keys differ are those set in the OR of the keys
      // and not in their AND. The same pass counts byte `next`, usually the
      // highest byte that differs.
      size_t counts[256] = {};
      uint64_t any = 0, all = ~uint64_t{0};
      int nextShift = 8 * g.next;
      for (size_t i = 0; i < m; i++) {
        uint64_t k = a[i].key;
        any |= k;
        all &= k;
        counts[(k >> nextShift) & 0xff]++;
      }
      uint64_t differ = (any ^ all) & (g.next == 7 ? ~uint64_t{0} : (uint64_t{1} << (nextShift + 8)) - 1);
      if (differ == 0) {  // all keys equal
        if ((a[0].key & 0xff) == 7) runs.push_back(g.span);
        continue;
      }
      int varying = 0;
      for (int b = 0; b < 8; b++) varying += ((differ >> (8 * b)) & 0xff) != 0;
      // MSD takes about log256(m) splits to get down to small parts: when
      // that is about as many passes as LSD takes, LSD leaves nothing for
      // std::sort.
      if (m >= kLsdMin && (varying <= 2 || (varying == 3 && m >= (size_t{1} << 16)))) {
        SortLsd(g.span, differ);
        AddRuns(g.span, runs);
        continue;
      }
      int b = (63 - __builtin_clzll(differ)) / 8;
      int shift = 8 * b;
      if (b != g.next) {
        std::fill(counts, counts + 256, 0);
        for (size_t i = 0; i < m; i++) counts[(a[i].key >> shift) & 0xff]++;
      }
      size_t starts[257];
      starts[0] = 0;
      for (int d = 0; d < 256; d++) starts[d + 1] = starts[d] + counts[d];
      size_t* at = counts;
      std::copy(starts, starts + 256, at);
      Item* t = tmp_ + g.span.lo;
      for (size_t i = 0; i < m; i++) t[at[(a[i].key >> shift) & 0xff]++] = a[i];
      Settle(g.span);
      for (int d = 255; d >= 0; d--) {
        Span bucket{g.span.lo + starts[d], g.span.lo + starts[d + 1]};
        if (bucket.hi - bucket.lo < 2) continue;
        if (b > 0) todo.push_back(Part{bucket, b - 1});
        else if (d == 7) runs.push_back(bucket);  // split on the low byte: each bucket holds equal keys
      }
    }
  }

  // Stable LSD radix sort of span's items by key, over the bytes set in differ.
  void SortLsd(Span span, uint64_t differ) {
    size_t m = span.hi - span.lo;
    int shifts[8], passes = 0;
    for (int b = 0; b < 8; b++) {
      if (((differ >> (8 * b)) & 0xff) != 0) shifts[passes++] = 8 * b;
    }
    size_t counts[8][256];
    for (int p = 0; p < passes; p++) std::fill(counts[p], counts[p] + 256, 0);
    Item* from = items_ + span.lo;
    Item* to = tmp_ + span.lo;
    for (size_t i = 0; i < m; i++) {
      uint64_t k = from[i].key;
      for (int p = 0; p < passes; p++) counts[p][(k >> shifts[p]) & 0xff]++;
    }
    for (int p = 0; p < passes; p++) {
      size_t* c = counts[p];
      size_t sum = 0;
      for (int d = 0; d < 256; d++) {
        size_t x = c[d];
        c[d] = sum;
        sum += x;
      }
      for (size_t i = 0; i < m; i++) to[c[(from[i].key >> shifts[p]) & 0xff]++] = from[i];
      std::swap(from, to);
    }
    if (from != items_ + span.lo) Settle(span);
  }

  // The span's items have just been written to tmp_: make them items_'s.
  void Settle(Span span) {
    if (span.hi - span.lo == n_) {
      std::swap(items_, tmp_);  // all items: swap the buffers rather than copy them back
    } else {
      std::copy(tmp_ + span.lo, tmp_ + span.hi, items_ + span.lo);
    }
  }

  // Appends the runs (see SortByKey) of span, sorted by key, to runs.
  void AddRuns(Span span, std::vector<Span>& runs) const {
    for (size_t i = span.lo; i < span.hi;) {
      size_t j = i + 1;
      uint64_t key = items_[i].key;
      while (j < span.hi && items_[j].key == key) j++;
      if (j - i > 1 && (key & 0xff) == 7) runs.push_back(Span{i, j});
      i = j;
    }
  }

  bool TieLess(uint32_t a, uint32_t b) const {
    if (tiebreak_ != nullptr && tiebreak_[a] != tiebreak_[b]) return tiebreak_[a] < tiebreak_[b];
    return a < b;
  }

  struct Part {
    Span span;
    int next;  // the items are in order by the key bytes above this one (7: the top byte, 0: the low byte)
  };

  Records r_;
  const uint32_t* tiebreak_;  // or nullptr
  size_t n_;
  std::unique_ptr<Item[]> bufferA_, bufferB_;
  std::unique_ptr<uint64_t[]> second_;  // by record: its key at depth 7 (FirstItems)
  Item* items_;
  Item* tmp_;  // scratch for the scatters
  std::vector<Part> parts_;  // SortByKey's stack, kept to reuse its memory
};

void SortRecords(const v8::FunctionCallbackInfo<v8::Value>& args) {
  v8::Isolate* isolate = args.GetIsolate();
  if (args.Length() < 2 || !args[0]->IsUint8Array() || !args[1]->IsUint32Array()) {
    ThrowType(isolate, "sortRecords(bytes: Uint8Array, offsets: Uint32Array, tiebreak?: Uint32Array)");
    return;
  }
  auto bytesView = args[0].As<v8::Uint8Array>();
  auto offsetsView = args[1].As<v8::Uint32Array>();
  size_t nOffsets = offsetsView->Length();
  size_t n = nOffsets == 0 ? 0 : nOffsets - 1;
  const uint8_t* bytes = DataOf<uint8_t>(bytesView);
  const uint32_t* offsets = DataOf<uint32_t>(offsetsView);
  const uint32_t* tiebreak = nullptr;
  if (args.Length() >= 3 && !args[2]->IsUndefined()) {
    if (!args[2]->IsUint32Array() || args[2].As<v8::Uint32Array>()->Length() < n) {
      ThrowType(isolate, "sortRecords: tiebreak must be a Uint32Array with one entry per record");
      return;
    }
    tiebreak = DataOf<uint32_t>(args[2].As<v8::Uint32Array>());
  }
  size_t byteLength = bytesView->ByteLength();
  for (size_t i = 0; i < n; i++) {
    if (offsets[i] > offsets[i + 1] || offsets[i + 1] > byteLength) {
      ThrowType(isolate, "sortRecords: offsets must ascend and stay inside bytes");
      return;
    }
  }

  auto out = v8::Uint32Array::New(v8::ArrayBuffer::New(isolate, n * sizeof(uint32_t)), 0, n);
  Sorter(Records{bytes, byteLength, offsets}, tiebreak, n).Sort(DataOf<uint32_t>(out));
  args.GetReturnValue().Set(out);
}

// gatherRecords(bytes: Uint8Array, offsets: Uint32Array, ids: Uint32Array,
//   outBytes: Uint8Array, outOffsets: Uint32Array) -> undefined
// Copies records ids[0], ids[1], ... of the blob (bytes, offsets) one after
// the other into outBytes, and their starts (plus the end) into outOffsets
// (ids.length + 1 entries). The caller sizes outBytes to the records' total.
// In JavaScript this was a byte loop per record in random order: 1.2 s of a
// 1 M RRset ingest, against one memcpy per record here.
void GatherRecords(const v8::FunctionCallbackInfo<v8::Value>& args) {
  v8::Isolate* isolate = args.GetIsolate();
  if (args.Length() < 5 || !args[0]->IsUint8Array() || !args[1]->IsUint32Array() || !args[2]->IsUint32Array() ||
      !args[3]->IsUint8Array() || !args[4]->IsUint32Array()) {
    ThrowType(isolate, "gatherRecords(bytes: Uint8Array, offsets: Uint32Array, ids: Uint32Array, outBytes: Uint8Array, "
                       "outOffsets: Uint32Array)");
    return;
  }
  auto bytesView = args[0].As<v8::Uint8Array>();
  auto offsetsView = args[1].As<v8::Uint32Array>();
  auto idsView = args[2].As<v8::Uint32Array>();
  auto outView = args[3].As<v8::Uint8Array>();
  auto outOffsetsView = args[4].As<v8::Uint32Array>();
  const uint8_t* bytes = DataOf<uint8_t>(bytesView);
  const uint32_t* offsets = DataOf<uint32_t>(offsetsView);
  const uint32_t* ids = DataOf<uint32_t>(idsView);
  uint8_t* out = DataOf<uint8_t>(outView);
  uint32_t* outOffsets = DataOf<uint32_t>(outOffsetsView);
  size_t n = idsView->Length();
  size_t records = offsetsView->Length() == 0 ? 0 : offsetsView->Length() - 1;
  size_t byteLength = bytesView->ByteLength(), outLength = outView->ByteLength();
  if (outOffsetsView->Length() != n + 1) {
    ThrowType(isolate, "gatherRecords: outOffsets must have ids.length + 1 entries");
    return;
  }
  size_t at = 0;
  for (size_t k = 0; k < n; k++) {
    uint32_t id = ids[k];
    if (id >= records || offsets[id] > offsets[id + 1] || offsets[id + 1] > byteLength) {
      ThrowType(isolate, "gatherRecords: an id is out of range or its record outside bytes");
      return;
    }
    uint32_t len = offsets[id + 1] - offsets[id];
    if (at + len > outLength) {
      ThrowType(isolate, "gatherRecords: outBytes is too small");
      return;
    }
    outOffsets[k] = static_cast<uint32_t>(at);
    std::memcpy(out + at, bytes + offsets[id], len);
    at += len;
  }
  outOffsets[n] = static_cast<uint32_t>(at);
}

}  // namespace

// Context-aware so that worker threads may load it too.
NODE_MODULE_INIT(/* exports, module, context */) {
  v8::Isolate* isolate = context->GetIsolate();
  exports->Set(context,
               v8::String::NewFromUtf8(isolate, "sortRecords").ToLocalChecked(),
               v8::FunctionTemplate::New(isolate, SortRecords)->GetFunction(context).ToLocalChecked())
      .Check();
  exports->Set(context,
               v8::String::NewFromUtf8(isolate, "gatherRecords").ToLocalChecked(),
               v8::FunctionTemplate::New(isolate, GatherRecords)->GetFunction(context).ToLocalChecked())
      .Check();
  (void)module;
}
