// Fair turns for searches that produce their results on the front-end thread
// (standard search).
//
// Why not `await setImmediate`: every stream that yields that way resumes in
// the SAME check phase of the next loop iteration, so with 1,000 large
// lookups streaming, one iteration ran 1,000 slices back to back and a ping
// waited 3 to 5 s for the poll phase (bench/flex-load.ts, scenario D).
// nextTurn() queues the caller and releases ONE waiter per loop iteration,
// oldest first: between two slices the loop polls its sockets, so a new
// request waits for at most one slice, and the streams share the CPU in
// round-robin order. An idle iteration costs a few microseconds (an epoll
// with zero timeout), nothing next to a slice.

const waiting: (() => void)[] = [];
let armed = false;
/** Turns given up since the process started: the server's metrics read it (turnsTaken). */
let taken = 0;

/** How many times a stream has let others go first since start-up (a plain count, read at scrape time). */
export function turnsTaken(): number {
  return taken;
}

function releaseOne(): void {
  const next = waiting.shift();
  if (waiting.length > 0) setImmediate(releaseOne);
  else armed = false;
  next?.();
}

/** Resolves on a later loop iteration, after every caller queued before this one. */
export function nextTurn(): Promise<void> {
  taken++;
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (!armed) {
      armed = true;
      setImmediate(releaseOne);
    }
  });
}
