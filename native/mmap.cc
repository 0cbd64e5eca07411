// rrscan_mmap: map an immutable shard file read-only and hand it to JavaScript
// as a SharedArrayBuffer, and survive the file changing underneath.
//
// Why a SharedArrayBuffer over the mapping: a SharedArrayBuffer's backing store
// is shared, not copied, when it is posted to a worker thread, so the main
// thread maps each shard once and every Piscina worker views the same pages.
// Mapping per worker would count the pages once per mapping in RSS, and
// reading into memory costs 1.2 to 1.5 s per GB. The mapping is released when
// the last SharedArrayBuffer referring to it, in any thread, is collected.
//
// Shards are immutable, but an operator's `cp` over a live file, `rsync
// --inplace` or a failing disk can still truncate one under a running
// server. A read of a mapped page past the new end of file raises SIGBUS,
// whose default action kills the process. So every mapping is registered in
// a process-wide table, and our SIGBUS handler, for an address inside a
// registered mapping, maps anonymous zero pages over the WHOLE mapping
// (MAP_FIXED replaces it in one step) and counts the fault; the faulting load
// then re-runs and reads zero, in JIT code, RE2 or zlib alike. The mapping
// is wrong from then on, which is why the count exists: the shard set sweeps
// faultsTotal() and quarantines every mapping with mappingFaults() > 0, and a
// search that held such a shard ends `failed` (search/local/shard-set.ts).
// Any other SIGBUS goes to the handler that was installed before ours, or
// to the default action, as if we were not here. mmap is a plain system call
// (not on POSIX's async-signal-safe list, but it takes no user-space lock in
// glibc), and the table is read with atomics only.
//
// mapFile also returns the identity of the file it mapped (device, inode,
// size, modification and change times, from fstat of the descriptor it
// mapped, so no rename can slip between them): the shard set compares it
// with the path's later to notice a file changed in place or replaced.
//
// releaseMapping(sab) lets go of the FILE before the collector lets go of the
// buffer: it maps anonymous, read-only zero pages over the same addresses
// (MAP_FIXED replaces the file mapping in one step), so the unlinked file's
// disk space and page cache are freed at once, while a stray read of a view
// that outlived its shard sees zeros instead of faulting. The caller releases
// a shard only once nothing reads it (search/local/shard-set.ts); the
// deleter still unmaps the range when the buffer is collected.
// The module is context-aware so it can be loaded by worker threads too; its
// table and handler are per process (the shared object is loaded once).
#include <node.h>
#include <v8.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>
#include <signal.h>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

namespace {

struct Mapping {
  void* addr;
  size_t length;
};

// The registered mappings. A slot is free when its base is 0. Writers take
// table_mutex; the SIGBUS handler reads without it (a signal handler must
// not block), which is safe because a slot's length is stored before its
// base is published and a mapping is unregistered before it is unmapped.
// 16,384 mappings: far above the shards a server holds (LIMITS.shardsMax).
constexpr size_t kSlots = 16384;
struct Slot {
  std::atomic<uintptr_t> base{0};
  std::atomic<size_t> length{0};
  std::atomic<uint32_t> faults{0};
};
Slot slots[kSlots];
std::mutex table_mutex;
std::atomic<uint64_t> faults_total{0};

struct sigaction previous_bus;
std::once_flag handler_installed;

Slot* FindSlot(uintptr_t base) {
  for (size_t i = 0; i < kSlots; i++) {
    if (slots[i].base.load(std::memory_order_acquire) == base) return &slots[i];
  }
  return nullptr;
}

bool Register(void* addr, size_t length) {
  std::lock_guard<std::mutex> hold(table_mutex);
  Slot* free = FindSlot(0);
  if (free == nullptr) return false;
  free->faults.store(0, std::memory_order_relaxed);
  free->length.store(length, std::memory_order_relaxed);
  free->base.store(reinterpret_cast<uintptr_t>(addr), std::memory_order_release);
  return true;
}

void Unregister(void* addr) {
  std::lock_guard<std::mutex> hold(table_mutex);
  Slot* s = FindSlot(reinterpret_cast<uintptr_t>(addr));
  if (s != nullptr) s->base.store(0, std::memory_order_release);
}

void OnBus(int sig, siginfo_t* info, void* context) {
  uintptr_t at = reinterpret_cast<uintptr_t>(info->si_addr);
  for (size_t i = 0; i < kSlots; i++) {
    uintptr_t base = slots[i].base.load(std::memory_order_acquire);
    if (base == 0) continue;
    size_t length = slots[i].length.load(std::memory_order_relaxed);
    if (at < base || at - base >= length) continue;
    void* zero = mmap(reinterpret_cast<void*>(base), length, PROT_READ,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
    if (zero == MAP_FAILED) break;  // cannot repair: die as we would have
    slots[i].faults.fetch_add(1, std::memory_order_relaxed);
    faults_total.fetch_add(1, std::memory_order_release);
    return;
  }
  // Not ours: the process meets the fate it would have met without us.
  if (previous_bus.sa_flags & SA_SIGINFO) {
    previous_bus.sa_sigaction(sig, info, context);
    return;
  }
  if (previous_bus.sa_handler != SIG_DFL && previous_bus.sa_handler != SIG_IGN) {
    previous_bus.sa_handler(sig);
    return;
  }
  // The default action: raised again, it is delivered when this handler
  // returns (SIGBUS is blocked while it runs), for a fault and for a
  // `kill -BUS` alike.
  signal(SIGBUS, SIG_DFL);
  raise(SIGBUS);
}

void InstallHandler() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = OnBus;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGBUS, &sa, &previous_bus);
}

void Unmap(void* data, size_t length, void* deleter_data) {
  (void)data;
  Mapping* m = static_cast<Mapping*>(deleter_data);
  if (m->addr != nullptr && m->length > 0) {
    Unregister(m->addr);
    munmap(m->addr, m->length);
  }
  delete m;
  (void)length;
}

void Throw(v8::Isolate* isolate, const std::string& message, int err) {
  std::string text = message + ": " + std::strerror(err);
  v8::Local<v8::Value> e = v8::Exception::Error(
      v8::String::NewFromUtf8(isolate, text.c_str()).ToLocalChecked());
  isolate->ThrowException(e);
}

std::string Identity(const struct stat& st) {
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
         std::to_string(static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec) + ":" +
         std::to_string(static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec);
}

void SetResult(const v8::FunctionCallbackInfo<v8::Value>& args, v8::Local<v8::Value> buffer, const std::string& identity) {
  v8::Isolate* isolate = args.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  v8::Local<v8::Object> out = v8::Object::New(isolate);
  out->Set(context, v8::String::NewFromUtf8(isolate, "buffer").ToLocalChecked(), buffer).Check();
  out->Set(context, v8::String::NewFromUtf8(isolate, "identity").ToLocalChecked(),
           v8::String::NewFromUtf8(isolate, identity.c_str()).ToLocalChecked()).Check();
  args.GetReturnValue().Set(out);
}

// mapFile(path: string): { buffer: SharedArrayBuffer, identity: string }
// identity is "dev:ino:size:mtimeNs:ctimeNs" of the file mapped.
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
    std::call_once(handler_installed, InstallHandler);
    if (!Register(addr, length)) {
      munmap(addr, length);
      close(fd);
      Throw(isolate, std::string("mmap ") + *path + ": more mappings than the fault table holds", EMFILE);
      return;
    }
    // No MADV_WILLNEED: on a file mapping it starts reading the whole file,
    // and a server maps every shard at start-up. Scans fault pages in front
    // to back, which the kernel's fault read-ahead already follows.
  }
  close(fd);  // the mapping keeps the file alive
  std::string identity = Identity(st);

  // V8 refuses a null data pointer for a non-empty store; an empty file gets
  // an empty, ordinary SharedArrayBuffer.
  if (length == 0) {
    SetResult(args, v8::SharedArrayBuffer::New(isolate, 0), identity);
    return;
  }
  Mapping* m = new Mapping{addr, length};
  std::unique_ptr<v8::BackingStore> store =
      v8::SharedArrayBuffer::NewBackingStore(addr, length, Unmap, m);
  std::shared_ptr<v8::BackingStore> shared(std::move(store));
  SetResult(args, v8::SharedArrayBuffer::New(isolate, shared), identity);
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

// mappingFaults(sab: SharedArrayBuffer): number -- SIGBUS faults the handler
// absorbed in this mapping (0 for a buffer that is not a registered mapping).
void MappingFaults(const v8::FunctionCallbackInfo<v8::Value>& args) {
  v8::Isolate* isolate = args.GetIsolate();
  if (args.Length() < 1 || !args[0]->IsSharedArrayBuffer()) {
    isolate->ThrowException(v8::Exception::TypeError(
        v8::String::NewFromUtf8(isolate, "mappingFaults(buffer) needs a SharedArrayBuffer").ToLocalChecked()));
    return;
  }
  void* addr = args[0].As<v8::SharedArrayBuffer>()->GetBackingStore()->Data();
  uint32_t faults = 0;
  if (addr != nullptr) {
    std::lock_guard<std::mutex> hold(table_mutex);
    Slot* s = FindSlot(reinterpret_cast<uintptr_t>(addr));
    if (s != nullptr) faults = s->faults.load(std::memory_order_relaxed);
  }
  args.GetReturnValue().Set(v8::Number::New(isolate, faults));
}

// faultsTotal(): number -- SIGBUS faults absorbed by this process so far:
// one atomic load, cheap enough to read at the end of every search.
void FaultsTotal(const v8::FunctionCallbackInfo<v8::Value>& args) {
  args.GetReturnValue().Set(v8::Number::New(args.GetIsolate(),
      static_cast<double>(faults_total.load(std::memory_order_acquire))));
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
  exports->Set(context,
               v8::String::NewFromUtf8(isolate, "mappingFaults").ToLocalChecked(),
               v8::FunctionTemplate::New(isolate, MappingFaults)->GetFunction(context).ToLocalChecked())
      .Check();
  exports->Set(context,
               v8::String::NewFromUtf8(isolate, "faultsTotal").ToLocalChecked(),
               v8::FunctionTemplate::New(isolate, FaultsTotal)->GetFunction(context).ToLocalChecked())
      .Check();
  (void)module;
}
