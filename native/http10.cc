// rrscan_http10: lets uWebSockets.js 20.30 answer HTTP/1.0 requests.
//
// Why: that build's parser accepts a request line only when it ends in
// " HTTP/1.1\r\n"; anything else counts as a request not yet complete, so an
// HTTP/1.0 request (HAProxy's `option httpchk` sends `OPTIONS / HTTP/1.0`,
// ApacheBench and many probes send GET ... HTTP/1.0) never reaches the
// application: the socket waits out uWS's idle timeout (~12 s) and closes
// with nothing sent. It also closes at once an HTTP/1.1 request without a
// Host header, which HTTP/1.0 requests usually lack. uWS.js has no hook into
// its parser, and the request bytes never pass through JavaScript.
//
// How: uSockets reads every connection of the uWS module with recv() through
// the module's PLT. install() points that one GOT slot of that one module at
// Recv() below (no other library, and no other function, is touched). Recv
// calls the real recv and, when what it read starts with a request line
// `METHOD SP /TARGET SP HTTP/1.0 CRLF`, rewrites the version to 1.1 in place
// and inserts, right after the line, `connection: close` (uWS then closes
// the connection once the answer is sent, as HTTP/1.0 wants), the marker
// header `<mark>: 1.0` (the application answers without chunked encoding,
// which HTTP/1.0 does not have), and `host:` when the request has none.
// Room for those bytes is kept by reading at most len - kReserveBytes.
//
// Limits: only a request line that arrives whole at the start of one read
// is seen (a line typed a byte at a time is not; every client measured
// sends its request in one write); TLS connections carry ciphertext here, so
// HTTP/1.0 over TLS is still not answered. An HTTP/1.1 client sending the
// marker header itself only gets its answer as an HTTP/1.0 client would.
//
// install(modulePath: string, mark: string): true, or why not (a string).

#include <node.h>
#include <v8.h>
#include <elf.h>
#include <link.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cstring>
#include <string>

namespace {

using RecvFn = ssize_t (*)(int, void*, size_t, int);

// The real recv, through this addon's own PLT (libc's).
const RecvFn realRecv = ::recv;
// Set once by install(), before the slot points at Recv; read-only after.
std::string insertion;
// Bytes a read leaves free for the insertion (and then some).
constexpr size_t kReserveBytes = 256;
constexpr char kVersion[] = " HTTP/1.0\r\n";
constexpr size_t kVersionBytes = sizeof(kVersion) - 1;
// A method is a short upper-case token; longer first words are not a request line.
constexpr size_t kMethodBytesMax = 16;

// Whether the header block that starts at `h` (it may be cut by the read) names a host.
bool HasHost(const char* h, size_t n) {
  while (n >= 2 && !(h[0] == '\r' && h[1] == '\n')) {
    if (n >= 5 && strncasecmp(h, "host:", 5) == 0) return true;
    const char* nl = static_cast<const char*>(memchr(h, '\n', n));
    if (nl == nullptr) return false;
    n -= static_cast<size_t>(nl + 1 - h);
    h = nl + 1;
  }
  return false;
}

// Rewrites an HTTP/1.0 request line at the start of b[0..n) (capacity cap); returns the new length.
size_t Upgrade(char* b, size_t n, size_t cap) {
  size_t i = 0;
  while (i < n && i <= kMethodBytesMax && b[i] >= 'A' && b[i] <= 'Z') i++;
  if (i == 0 || i > kMethodBytesMax || i + 1 >= n || b[i] != ' ' || b[i + 1] != '/') return n;
  i++;
  while (i < n && static_cast<unsigned char>(b[i]) > ' ') i++;
  if (n - i < kVersionBytes || memcmp(b + i, kVersion, kVersionBytes) != 0) return n;
  b[i + kVersionBytes - 3] = '1';  // " HTTP/1.0\r\n" -> " HTTP/1.1\r\n"
  const size_t at = i + kVersionBytes;
  const bool host = HasHost(b + at, n - at);
  const size_t add = insertion.size() + (host ? 0 : 8);
  if (n + add > cap) return n;
  memmove(b + at + add, b + at, n - at);
  memcpy(b + at, insertion.data(), insertion.size());
  if (!host) memcpy(b + at + insertion.size(), "host: \r\n", 8);
  return n + add;
}

ssize_t Recv(int fd, void* buf, size_t len, int flags) {
  if (len <= 2 * kReserveBytes) return realRecv(fd, buf, len, flags);
  const ssize_t n = realRecv(fd, buf, len - kReserveBytes, flags);
  if (n <= 0) return n;
  return static_cast<ssize_t>(Upgrade(static_cast<char*>(buf), static_cast<size_t>(n), len));
}

struct Module {
  const char* path;
  ElfW(Addr) base = 0;
  const ElfW(Dyn)* dynamic = nullptr;
  ElfW(Addr) relro = 0;
  ElfW(Addr) relroEnd = 0;
};

int FindModule(dl_phdr_info* info, size_t, void* data) {
  auto* m = static_cast<Module*>(data);
  if (info->dlpi_name == nullptr || strcmp(info->dlpi_name, m->path) != 0) return 0;
  m->base = info->dlpi_addr;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr)& p = info->dlpi_phdr[i];
    if (p.p_type == PT_DYNAMIC) m->dynamic = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + p.p_vaddr);
    if (p.p_type == PT_GNU_RELRO) {
      m->relro = info->dlpi_addr + p.p_vaddr;
      m->relroEnd = m->relro + p.p_memsz;
    }
  }
  return 1;
}

// Points the module's GOT slot for recv at Recv; nullptr on success, else why not.
const char* Install(const char* path) {
  Module m;
  m.path = path;
  dl_iterate_phdr(FindModule, &m);
  if (m.dynamic == nullptr) return "the uWS module is not loaded";
  ElfW(Addr) jmprel = 0, symtab = 0, strtab = 0;
  size_t pltrelsz = 0;
  ElfW(Sxword) pltrel = 0;
  // The loader may have relocated these entries in place, or not.
  auto addr = [&](ElfW(Addr) a) { return a < m.base ? m.base + a : a; };
  for (const ElfW(Dyn)* d = m.dynamic; d->d_tag != DT_NULL; d++) {
    if (d->d_tag == DT_JMPREL) jmprel = addr(d->d_un.d_ptr);
    else if (d->d_tag == DT_PLTRELSZ) pltrelsz = d->d_un.d_val;
    else if (d->d_tag == DT_PLTREL) pltrel = static_cast<ElfW(Sxword)>(d->d_un.d_val);
    else if (d->d_tag == DT_SYMTAB) symtab = addr(d->d_un.d_ptr);
    else if (d->d_tag == DT_STRTAB) strtab = addr(d->d_un.d_ptr);
  }
  if (jmprel == 0 || symtab == 0 || strtab == 0 || pltrel != DT_RELA) return "the uWS module has no RELA PLT relocations";
  const auto* rel = reinterpret_cast<const ElfW(Rela)*>(jmprel);
  const auto* syms = reinterpret_cast<const ElfW(Sym)*>(symtab);
  const auto* names = reinterpret_cast<const char*>(strtab);
  for (size_t i = 0; i < pltrelsz / sizeof(ElfW(Rela)); i++) {
    if (strcmp(names + syms[ELF64_R_SYM(rel[i].r_info)].st_name, "recv") != 0) continue;
    auto** slot = reinterpret_cast<void**>(m.base + rel[i].r_offset);
    if (*slot == reinterpret_cast<void*>(&Recv)) return nullptr;
    const auto page = static_cast<ElfW(Addr)>(sysconf(_SC_PAGESIZE));
    auto* start = reinterpret_cast<void*>(reinterpret_cast<ElfW(Addr)>(slot) & ~(page - 1));
    if (mprotect(start, page, PROT_READ | PROT_WRITE) != 0) return "mprotect of the GOT page failed";
    *slot = reinterpret_cast<void*>(&Recv);
    const auto s = reinterpret_cast<ElfW(Addr)>(slot);
    if (s >= m.relro && s < m.relroEnd) mprotect(start, page, PROT_READ);
    return nullptr;
  }
  return "the uWS module does not import recv";
}

void InstallHttp10(const v8::FunctionCallbackInfo<v8::Value>& args) {
  v8::Isolate* isolate = args.GetIsolate();
  if (args.Length() < 2 || !args[0]->IsString() || !args[1]->IsString()) {
    isolate->ThrowException(v8::Exception::TypeError(
        v8::String::NewFromUtf8(isolate, "install(modulePath: string, mark: string)").ToLocalChecked()));
    return;
  }
  v8::String::Utf8Value path(isolate, args[0]);
  v8::String::Utf8Value mark(isolate, args[1]);
  if (insertion.empty()) insertion = std::string("connection: close\r\n") + *mark + ": 1.0\r\n";
  const char* why = Install(*path);
  if (why == nullptr) args.GetReturnValue().Set(true);
  else args.GetReturnValue().Set(v8::String::NewFromUtf8(isolate, why).ToLocalChecked());
}

}  // namespace

NODE_MODULE_INIT(/* exports, module, context */) {
  v8::Isolate* isolate = context->GetIsolate();
  exports->Set(context, v8::String::NewFromUtf8(isolate, "install").ToLocalChecked(),
               v8::FunctionTemplate::New(isolate, InstallHttp10)->GetFunction(context).ToLocalChecked())
      .Check();
  (void)module;
}
