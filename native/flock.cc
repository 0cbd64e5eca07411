// rrscan_flock: flock(2) on a file descriptor, for the data directory's locks.
//
// Why: a lock whose liveness is a pid written in a file cannot tell a dead
// writer from a live one in another pid namespace (two containers sharing a
// data volume) or after a reboot reused the pid. A flock belongs to an open
// file description; the kernel drops it when its holder dies, whatever its
// namespace, and NFS emulates it with byte-range locks.
//
// tryLock(fd: number, exclusive: boolean): boolean  (false: someone else holds it)
// unlock(fd: number): void
#include <node.h>
#include <v8.h>
#include <sys/file.h>
#include <cerrno>
#include <cstring>
#include <string>

namespace {

void ThrowErrno(v8::Isolate* isolate, const char* what, int err) {
  std::string text = std::string(what) + ": " + std::strerror(err);
  v8::Local<v8::Value> e = v8::Exception::Error(v8::String::NewFromUtf8(isolate, text.c_str()).ToLocalChecked());
  isolate->ThrowException(e);
}

bool FdArg(const v8::FunctionCallbackInfo<v8::Value>& args, int* fd) {
  if (args.Length() < 1 || !args[0]->IsInt32() || args[0].As<v8::Int32>()->Value() < 0) {
    args.GetIsolate()->ThrowException(v8::Exception::TypeError(
        v8::String::NewFromUtf8(args.GetIsolate(), "fd must be a non-negative integer").ToLocalChecked()));
    return false;
  }
  *fd = args[0].As<v8::Int32>()->Value();
  return true;
}

void TryLock(const v8::FunctionCallbackInfo<v8::Value>& args) {
  int fd;
  if (!FdArg(args, &fd)) return;
  bool exclusive = args.Length() >= 2 && args[1]->BooleanValue(args.GetIsolate());
  int rc;
  do rc = flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB);
  while (rc != 0 && errno == EINTR);
  if (rc == 0) return args.GetReturnValue().Set(true);
  if (errno == EWOULDBLOCK) return args.GetReturnValue().Set(false);
  ThrowErrno(args.GetIsolate(), "flock", errno);
}

void Unlock(const v8::FunctionCallbackInfo<v8::Value>& args) {
  int fd;
  if (!FdArg(args, &fd)) return;
  int rc;
  do rc = flock(fd, LOCK_UN);
  while (rc != 0 && errno == EINTR);
  if (rc != 0) ThrowErrno(args.GetIsolate(), "flock(LOCK_UN)", errno);
}

}  // namespace

NODE_MODULE_INIT(/* exports, module, context */) {
  v8::Isolate* isolate = context->GetIsolate();
  auto set = [&](const char* name, v8::FunctionCallback fn) {
    exports->Set(context, v8::String::NewFromUtf8(isolate, name).ToLocalChecked(),
                 v8::FunctionTemplate::New(isolate, fn)->GetFunction(context).ToLocalChecked())
        .Check();
  };
  set("tryLock", TryLock);
  set("unlock", Unlock);
  (void)module;
}
