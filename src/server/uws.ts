// The uWebSockets.js loader is lib/uws.ts (the metrics listener, which ingest
// uses too, sits below the server and needs it). app.ts, exchange.ts and
// saf-writer.ts still import it from here while other branches edit them;
// once their imports name lib/uws.js, this file goes.

export { uws, UWS_BINARY, type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from '../lib/uws.js';
