// rrscan_socket: set TCP_NOTSENT_LOWAT on the server's listening socket.
//
// Why: with the send buffer autotuned to megabytes, the kernel held up to
// 1 MB of unsent answer per slow reader (1 GB for 1,000 readers of large
// lookups, bench/flex-load.ts), and reported a socket writable only after
// half of that had drained, so uWebSockets.js, which ends a response after
// 10 s without progress, cut slow readers off after ~10 s. With
// TCP_NOTSENT_LOWAT the socket is writable whenever fewer than `bytes` are
// queued unsent: kernel memory for 100 slow readers fell from 387 MB to
// 35 MB, and the first cuts moved from 9 s to ~19 s (what remains is a
// reader whose own receive window stays closed for 10 s). Accepted sockets
// inherit the option from the listening socket.
//
// uWS.js does not expose the listening socket's descriptor, so this finds it:
// the TCP socket in this process that listens on `port`.
//
// setNotSentLowat(port: number, bytes: number): number  (sockets changed)
#include <node.h>
#include <v8.h>
#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

int ListeningPort(int fd) {
  int type = 0, listening = 0;
  socklen_t len = sizeof(type);
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) return -1;
  len = sizeof(listening);
  if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening) return -1;
  sockaddr_storage addr;
  len = sizeof(addr);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return -1;
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  return -1;
}

void SetNotSentLowat(const v8::FunctionCallbackInfo<v8::Value>& args) {
  v8::Isolate* isolate = args.GetIsolate();
  if (args.Length() < 2 || !args[0]->IsUint32() || !args[1]->IsUint32()) {
    isolate->ThrowException(v8::Exception::TypeError(
        v8::String::NewFromUtf8(isolate, "setNotSentLowat(port: number, bytes: number)").ToLocalChecked()));
    return;
  }
  int port = static_cast<int>(args[0].As<v8::Uint32>()->Value());
  int bytes = static_cast<int>(args[1].As<v8::Uint32>()->Value());
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) {
    std::string text = std::string("opendir /proc/self/fd: ") + std::strerror(errno);
    isolate->ThrowException(v8::Exception::Error(v8::String::NewFromUtf8(isolate, text.c_str()).ToLocalChecked()));
    return;
  }
  int changed = 0;
  while (dirent* e = readdir(dir)) {
    char* end = nullptr;
    long fd = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || fd == dirfd(dir)) continue;
    if (ListeningPort(static_cast<int>(fd)) != port) continue;
    if (setsockopt(static_cast<int>(fd), IPPROTO_TCP, TCP_NOTSENT_LOWAT, &bytes, sizeof(bytes)) == 0) changed++;
  }
  closedir(dir);
  args.GetReturnValue().Set(changed);
}

}  // namespace

NODE_MODULE_INIT(/* exports, module, context */) {
  v8::Isolate* isolate = context->GetIsolate();
  exports->Set(context,
               v8::String::NewFromUtf8(isolate, "setNotSentLowat").ToLocalChecked(),
               v8::FunctionTemplate::New(isolate, SetNotSentLowat)->GetFunction(context).ToLocalChecked())
      .Check();
  (void)module;
}
