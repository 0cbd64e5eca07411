// A progress bar on a TTY, nothing elsewhere (CI logs and pipes stay clean).

import cliProgress from 'cli-progress';

export interface Progress {
  update(done: number, total?: number): void;
  stop(): void;
}

export function progressBar(label: string, total: number, unit: string): Progress {
  if (!process.stderr.isTTY) return { update() {}, stop() {} };
  const bar = new cliProgress.SingleBar({
    format: `${label} [{bar}] {percentage}% | {value}/{total} ${unit} | {eta_formatted} left`,
    stream: process.stderr,
    hideCursor: true,
    etaBuffer: 50,
  }, cliProgress.Presets.shades_classic);
  bar.start(total, 0);
  return {
    update(done, t) {
      if (t !== undefined && t !== bar.getTotal()) bar.setTotal(t);
      bar.update(done);
    },
    stop() {
      bar.stop();
    },
  };
}
