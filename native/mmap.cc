// rrscan_mmap: map an immutable shard file read-only and hand it to JavaScript
// as a SharedArrayBuffer.
//
// Why a SharedArrayBuffer over the mapping: a SharedArrayBuffer's backing store
// is shared, not copied, when it is posted to a worker thread, so the main
// thread maps each shard once and every Piscina worker views the same pages.
// Mapping per worker would count the pages once per mapping in RSS, and
// reading into memory costs 1.2 to 1.5 s per GB. The mapping is released when
// the last SharedArrayBuffer referring to it, in any thread, is collected.
//
// The file must never change while mapped (shards are immutable: the writer
// publishes new files and swaps the manifest, and deletion only unlinks).
//
// releaseMapping(sab) lets go of the FILE before the collector lets go of the
// buffer: it maps anonymous, read-only zero pages over the same addresses
// (MAP_FIXED replaces the file mapping in one step), so the unlinked file's
// disk space and page cache are freed at once, while a stray read of a view
// that outlived its shard sees zeros instead of faulting. The caller releases
// a shard only once nothing reads it (search/local/shard-set.ts); the
// deleter still unmaps the range when the buffer is collected.
// The module is context-aware so it can be loaded by worker threads too.
#include <node.h>
#include <v8.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <string>

namespace {

struct Mapping {
  void* addr;
  size_t length;
};

void Unmap(void* data, size_t length, void* deleter_data) {
  (void)data;
  Mapping* m = static_cast<Mapping*>(deleter_data);
  if (m->addr != nullptr && m->length > 0) munmap(m->addr, m->length);
  delete m;
  (void)length;
}

void Throw(v8::Isolate* isolate, const std::string& message, int err) {
  std::string text = message + ": " + std::strerror(err);
  v8::Local<v8::Value> e = v8::Exception::Error(
      v8::String::NewFromUtf8(isolate, text.c_str()).ToLocalChecked());
  isolate->ThrowException(e);
}

// mapFile(path: string): SharedArrayBuffer
void MapFile(const v8::FunctionCallbackInfo<v8::Value>& args) {
  v8::Isolate* isolate = args.GetIsolate();
  if (args.Length() < 1 || !args[0]->IsString()) {
    isolate->ThrowException(v8::Exception::TypeError(
        v8::String::NewFromUtf8(isolate, "mapFile(path) needs a string").ToLocalChecked()));
    return;
  }
  v8::String::Utf8Value path(isolate, args[0]);
  int fd = open(*path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    Throw(isolate, std::string("open ") + *path, errno);
    return;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    Throw(isolate, std::string("fstat ") + *path, err);
    return;
  }
  size_t length = static_cast<size_t>(st.st_size);
  void* addr = nullptr;
  if (length > 0) {
    addr = mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, 0);
    if (addr == MAP_FAILED) {
      int err = errno;
      close(fd);
      Throw(isolate, std::string("mmap ") + *path, err);
      return;
    }
    // Scans read shards front to back; the kernel can read ahead further.
    madvise(addr, length, MADV_WILLNEED);
  }
  close(fd);  // the mapping keeps the file alive

  Mapping* m = new Mapping{addr, length};
  // V8 refuses a null data pointer for a non-empty store; an empty file gets
  // an empty, ordinary SharedArrayBuffer.
  if (length == 0) {
    delete m;
    args.GetReturnValue().Set(v8::SharedArrayBuffer::New(isolate, 0));
    return;
  }
  std::unique_ptr<v8::BackingStore> store =
      v8::SharedArrayBuffer::NewBackingStore(addr, length, Unmap, m);
  std::shared_ptr<v8::BackingStore> shared(std::move(store));
  args.GetReturnValue().Set(v8::SharedArrayBuffer::New(isolate, shared));
}

// releaseMapping(sab: SharedArrayBuffer): boolean
void ReleaseMapping(const v8::FunctionCallbackInfo<v8::Value>& args) {
  v8::Isolate* isolate = args.GetIsolate();
  if (args.Length() < 1 || !args[0]->IsSharedArrayBuffer()) {
    isolate->ThrowException(v8::Exception::TypeError(
        v8::String::NewFromUtf8(isolate, "releaseMapping(buffer) needs a SharedArrayBuffer").ToLocalChecked()));
    return;
  }
  std::shared_ptr<v8::BackingStore> store = args[0].As<v8::SharedArrayBuffer>()->GetBackingStore();
  void* addr = store->Data();
  size_t length = store->ByteLength();
  if (addr == nullptr || length == 0) {
    args.GetReturnValue().Set(false);
    return;
  }
  void* zero = mmap(addr, length, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
  if (zero == MAP_FAILED) {
    Throw(isolate, "releaseMapping", errno);
    return;
  }
  args.GetReturnValue().Set(true);
}

}  // namespace

NODE_MODULE_INIT(/* exports, module, context */) {
  v8::Isolate* isolate = context->GetIsolate();
  exports->Set(context,
               v8::String::NewFromUtf8(isolate, "mapFile").ToLocalChecked(),
               v8::FunctionTemplate::New(isolate, MapFile)->GetFunction(context).ToLocalChecked())
      .Check();
  exports->Set(context,
               v8::String::NewFromUtf8(isolate, "releaseMapping").ToLocalChecked(),
               v8::FunctionTemplate::New(isolate, ReleaseMapping)->GetFunction(context).ToLocalChecked())
      .Check();
  (void)module;
}
