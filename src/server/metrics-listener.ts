// The server's metrics and health listener (`serve --metrics-port N`): the
// operator's listener of lib/metrics-listener.ts, whose failures to answer
// go to the service log.

import {
  startMetricsListener as startListener, type MetricsListener, type MetricsText, type ReadinessCheck,
} from '../lib/metrics-listener.js';
import { log } from './log.js';

export { readinessAnswer, type MetricsListener, type MetricsText, type Readiness, type ReadinessCheck } from '../lib/metrics-listener.js';

export function startMetricsListener(host: string, port: number, registry: MetricsText, ready: ReadinessCheck): Promise<MetricsListener> {
  return startListener(host, port, registry, ready, log);
}
