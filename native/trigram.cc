// rrscan_trigram: builds the trigram index of a record blob for the shard
// writer, and decodes its posting lists for searches
// (src/shard/trigram-index.ts describes the format and the two passes).
//
// Why native: the index walks every byte of the names and rdata blobs twice
// with random access into two 328,509-entry tables; in JavaScript that was
// about 1 s of a 1 M RRset shard, the largest single step of the writer.
// Decoding postings was the selective and substring searches' largest cost
// at 100 M RRsets (15 shards, about a MB of postings a query; the selective
// class of node dist/bench/scale.js); over 2 M names the two classes'
// trigram step went 0.30 -> 0.21 and 0.26 -> 0.17 ms when it moved here
// from JavaScript (node dist/bench/micro/pattern-scan.js 2000000 --no-rg,
// "trigram ms", run on each build).
//
// buildTrigramIndex(blob: Uint8Array, offsets: Uint32Array)
//   -> { keys: Uint32Array, starts: Uint32Array, postings: Uint8Array }
//    | { badRecord: number, badOffset: number }   a byte that is not printable ASCII
//    | { unterminated: number }                   a record that does not end with "\n"
// The caller turns the last two into the assertion failures it always had.
//
// decodePostings(postings: Uint8Array, s: number, e: number) -> Uint32Array
//   the ascending ids of the list in bytes [s, e)
// intersectPostings(running: Uint32Array, postings: Uint8Array, s: number, e: number) -> Uint32Array
//   the ids of `running` (ascending) that the list in bytes [s, e) also holds
// Both read a shard's mapping: a file truncated under them reads zeros (see
// mmap.cc), which decode as repeated ids; every loop is bounded by the byte
// range and the output's size, so damaged bytes give wrong ids, never a
// runaway, and the shard set fails the search that read them.
#include <node.h>
#include <v8.h>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

constexpr int kSymbols = 69;
constexpr int kSpace = kSymbols * kSymbols * kSymbols;

struct Tables {
  int16_t dense[256];
  uint8_t symbolByte[kSymbols];
  Tables() {
    for (int b = 0; b < 256; b++) dense[b] = -1;
    int d = 0;
    for (int b = 0x20; b <= 0x7e; b++) {
      if (b >= 0x41 && b <= 0x5a) continue;
      symbolByte[d] = static_cast<uint8_t>(b);
      dense[b] = static_cast<int16_t>(d++);
    }
    for (int b = 0x41; b <= 0x5a; b++) dense[b] = dense[b | 0x20];
  }
};

const Tables kTables;

inline uint32_t VarintLength(uint32_t v) {
  return v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5;
}

template <typename T>
T* DataOf(v8::Local<v8::ArrayBufferView> view) {
  auto store = view->Buffer()->GetBackingStore();
  return reinterpret_cast<T*>(static_cast<uint8_t*>(store->Data()) + view->ByteOffset());
}

void SetNumber(v8::Isolate* isolate, v8::Local<v8::Context> context, v8::Local<v8::Object> o, const char* key, double v) {
  o->Set(context, v8::String::NewFromUtf8(isolate, key).ToLocalChecked(), v8::Number::New(isolate, v)).Check();
}

void BuildTrigramIndex(const v8::FunctionCallbackInfo<v8::Value>& args) {
  v8::Isolate* isolate = args.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  if (args.Length() < 2 || !args[0]->IsUint8Array() || !args[1]->IsUint32Array()) {
    isolate->ThrowException(v8::Exception::TypeError(
        v8::String::NewFromUtf8(isolate, "buildTrigramIndex(blob: Uint8Array, offsets: Uint32Array)").ToLocalChecked()));
    return;
  }
  auto blobView = args[0].As<v8::Uint8Array>();
  auto offsetsView = args[1].As<v8::Uint32Array>();
  const uint8_t* blob = DataOf<uint8_t>(blobView);
  const uint32_t* offsets = DataOf<uint32_t>(offsetsView);
  size_t n = offsetsView->Length() == 0 ? 0 : offsetsView->Length() - 1;
  const int16_t* dense = kTables.dense;
  v8::Local<v8::Object> result = v8::Object::New(isolate);
  auto bad = [&](size_t p, size_t r) {
    SetNumber(isolate, context, result, "badRecord", static_cast<double>(r));
    SetNumber(isolate, context, result, "badOffset", static_cast<double>(p));
    args.GetReturnValue().Set(result);
  };

  // last[t] = 1 + the last record that had trigram t (0: none yet); size[t] = its postings bytes.
  std::vector<uint32_t> last(kSpace, 0), size(kSpace, 0);
  for (size_t r = 0; r < n; r++) {
    size_t s = offsets[r];
    if (offsets[r + 1] == 0 || offsets[r + 1] > blobView->ByteLength() || offsets[r + 1] - 1 < s ||
        blob[offsets[r + 1] - 1] != 0x0a) {
      SetNumber(isolate, context, result, "unterminated", static_cast<double>(r));
      args.GetReturnValue().Set(result);
      return;
    }
    size_t e = offsets[r + 1] - 1;
    if (e - s < 3) {
      for (size_t p = s; p < e; p++) if (dense[blob[p]] < 0) return bad(p, r);
      continue;
    }
    int a = dense[blob[s]], b = dense[blob[s + 1]];
    if (a < 0) return bad(s, r);
    if (b < 0) return bad(s + 1, r);
    uint32_t tag = static_cast<uint32_t>(r + 1);
    for (size_t p = s + 2; p < e; p++) {
      int c = dense[blob[p]];
      if (c < 0) return bad(p, r);
      int t = (a * kSymbols + b) * kSymbols + c;
      uint32_t prev = last[t];
      if (prev != tag) {
        size[t] += VarintLength(prev == 0 ? static_cast<uint32_t>(r) : static_cast<uint32_t>(r) - (prev - 1));
        last[t] = tag;
      }
      a = b;
      b = c;
    }
  }

  size_t keyCount = 0;
  uint64_t total = 0;
  for (int t = 0; t < kSpace; t++) if (size[t] > 0) { keyCount++; total += size[t]; }
  if (total >= (uint64_t(1) << 32) || n >= (size_t(1) << 28)) {
    isolate->ThrowException(v8::Exception::RangeError(
        v8::String::NewFromUtf8(isolate, "trigram postings exceed 4 GiB").ToLocalChecked()));
    return;
  }
  auto keysArray = v8::Uint32Array::New(v8::ArrayBuffer::New(isolate, keyCount * 4), 0, keyCount);
  auto startsArray = v8::Uint32Array::New(v8::ArrayBuffer::New(isolate, (keyCount + 1) * 4), 0, keyCount + 1);
  auto postingsArray = v8::Uint8Array::New(v8::ArrayBuffer::New(isolate, total), 0, total);
  uint32_t* keys = DataOf<uint32_t>(keysArray);
  uint32_t* starts = DataOf<uint32_t>(startsArray);
  uint8_t* postings = DataOf<uint8_t>(postingsArray);
  std::vector<uint32_t>& cursor = size;
  size_t k = 0;
  uint32_t at = 0;
  for (int t = 0; t < kSpace; t++) {
    uint32_t len = size[t];
    if (len == 0) continue;
    int a = t / (kSymbols * kSymbols), b = (t / kSymbols) % kSymbols, c = t % kSymbols;
    keys[k] = (uint32_t(kTables.symbolByte[a]) << 16) | (uint32_t(kTables.symbolByte[b]) << 8) | kTables.symbolByte[c];
    starts[k] = at;
    cursor[t] = at;
    at += len;
    k++;
  }
  starts[keyCount] = at;

  std::fill(last.begin(), last.end(), 0);
  for (size_t r = 0; r < n; r++) {
    size_t s = offsets[r], e = offsets[r + 1] - 1;
    if (e - s < 3) continue;
    int a = dense[blob[s]], b = dense[blob[s + 1]];
    uint32_t tag = static_cast<uint32_t>(r + 1);
    for (size_t p = s + 2; p < e; p++) {
      int c = dense[blob[p]];
      int t = (a * kSymbols + b) * kSymbols + c;
      uint32_t prev = last[t];
      if (prev != tag) {
        uint32_t v = prev == 0 ? static_cast<uint32_t>(r) : static_cast<uint32_t>(r) - (prev - 1);
        uint32_t w = cursor[t];
        while (v >= 0x80) { postings[w++] = static_cast<uint8_t>((v & 0x7f) | 0x80); v >>= 7; }
        postings[w++] = static_cast<uint8_t>(v);
        cursor[t] = w;
        last[t] = tag;
      }
      a = b;
      b = c;
    }
  }
  result->Set(context, v8::String::NewFromUtf8(isolate, "keys").ToLocalChecked(), keysArray).Check();
  result->Set(context, v8::String::NewFromUtf8(isolate, "starts").ToLocalChecked(), startsArray).Check();
  result->Set(context, v8::String::NewFromUtf8(isolate, "postings").ToLocalChecked(), postingsArray).Check();
  args.GetReturnValue().Set(result);
}

// One delta at p (before end): at most 5 bytes, the last without the continuation bit.
inline uint64_t NextDelta(const uint8_t*& p, const uint8_t* end) {
  if (*p < 0x80) return *p++;  // most deltas of a long list: one byte
  uint64_t v = 0;
  for (int shift = 0; p < end && shift < 35; shift += 7) {
    uint8_t b = *p++;
    v |= uint64_t(b & 0x7f) << shift;
    if (b < 0x80) break;
  }
  return v;
}

// The bytes [s, e) of args[at] (a Uint8Array), checked; false (with a thrown error) when they are not inside it.
bool PostingsRange(const v8::FunctionCallbackInfo<v8::Value>& args, int at, const uint8_t** begin, const uint8_t** end) {
  v8::Isolate* isolate = args.GetIsolate();
  if (args.Length() < at + 3 || !args[at]->IsUint8Array() || !args[at + 1]->IsUint32() || !args[at + 2]->IsUint32()) {
    isolate->ThrowException(v8::Exception::TypeError(
        v8::String::NewFromUtf8(isolate, "postings: (Uint8Array, start: uint32, end: uint32)").ToLocalChecked()));
    return false;
  }
  auto view = args[at].As<v8::Uint8Array>();
  uint32_t s = args[at + 1].As<v8::Uint32>()->Value(), e = args[at + 2].As<v8::Uint32>()->Value();
  if (s > e || e > view->ByteLength()) {
    isolate->ThrowException(v8::Exception::RangeError(
        v8::String::NewFromUtf8(isolate, "postings range outside the index").ToLocalChecked()));
    return false;
  }
  const uint8_t* bytes = DataOf<uint8_t>(view);
  *begin = bytes + s;
  *end = bytes + e;
  return true;
}

void DecodePostings(const v8::FunctionCallbackInfo<v8::Value>& args) {
  const uint8_t *p, *end;
  if (!PostingsRange(args, 0, &p, &end)) return;
  // One id per byte without the continuation bit: the output sized exactly.
  size_t count = 0;
  for (const uint8_t* q = p; q < end; q++) count += *q < 0x80;
  auto out = v8::Uint32Array::New(v8::ArrayBuffer::New(args.GetIsolate(), count * 4), 0, count);
  uint32_t* ids = DataOf<uint32_t>(out);
  uint64_t id = 0;
  for (size_t n = 0; n < count && p < end; n++) {
    id += NextDelta(p, end);
    ids[n] = static_cast<uint32_t>(id);
  }
  args.GetReturnValue().Set(out);
}

void IntersectPostings(const v8::FunctionCallbackInfo<v8::Value>& args) {
  v8::Isolate* isolate = args.GetIsolate();
  if (args.Length() < 1 || !args[0]->IsUint32Array()) {
    isolate->ThrowException(v8::Exception::TypeError(
        v8::String::NewFromUtf8(isolate, "intersectPostings(running: Uint32Array, ...)").ToLocalChecked()));
    return;
  }
  const uint8_t *p, *end;
  if (!PostingsRange(args, 1, &p, &end)) return;
  auto runningView = args[0].As<v8::Uint32Array>();
  const uint32_t* running = DataOf<uint32_t>(runningView);
  size_t rn = runningView->Length();
  auto out = v8::Uint32Array::New(v8::ArrayBuffer::New(isolate, rn * 4), 0, rn);
  uint32_t* kept = DataOf<uint32_t>(out);
  size_t i = 0, n = 0;
  uint64_t id = 0;
  // The list cannot skip (each id is the sum of the deltas before it), so it is read until `running` is exhausted.
  while (p < end && i < rn) {
    id += NextDelta(p, end);
    while (i < rn && running[i] < id) i++;
    if (i < rn && running[i] == id) kept[n++] = running[i++];
  }
  args.GetReturnValue().Set(n == rn ? out : v8::Uint32Array::New(out->Buffer(), 0, n));
}

void Export(v8::Local<v8::Context> context, v8::Local<v8::Object> exports, const char* name, v8::FunctionCallback f) {
  v8::Isolate* isolate = context->GetIsolate();
  exports->Set(context, v8::String::NewFromUtf8(isolate, name).ToLocalChecked(),
               v8::FunctionTemplate::New(isolate, f)->GetFunction(context).ToLocalChecked())
      .Check();
}

}  // namespace

// Context-aware so that worker threads may load it too.
NODE_MODULE_INIT(/* exports, module, context */) {
  Export(context, exports, "buildTrigramIndex", BuildTrigramIndex);
  Export(context, exports, "decodePostings", DecodePostings);
  Export(context, exports, "intersectPostings", IntersectPostings);
  (void)module;
}
