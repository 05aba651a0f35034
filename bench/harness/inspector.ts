/**
 * CPU profiles of a worker under `wrangler dev`, through the DevTools inspector wrangler serves for
 * it (its --inspector-port, read from the wrangler process's command line, so that an older checkout's
 * deployment can be profiled too).
 */
import { readFileSync, writeFileSync } from 'node:fs';

/** The --inspector-port of a wrangler process, or null. */
export function inspectorPort(wranglerPid: number): number | null {
  try {
    const args = readFileSync(`/proc/${wranglerPid}/cmdline`, 'utf8').split('\0');
    const at = args.indexOf('--inspector-port');
    return at === -1 ? null : Number(args[at + 1]);
  } catch {
    return null;
  }
}

interface Target {
  webSocketDebuggerUrl?: string;
}

/** A DevTools session on the worker behind `port`: profile start, and stop to a .cpuprofile file. */
export async function workerProfiler(port: number) {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json`)).json()) as Target[];
  const url = targets.find((t) => t.webSocketDebuggerUrl)?.webSocketDebuggerUrl;
  if (!url) throw new Error(`no debuggable worker at inspector port ${port}`);
  // wrangler's inspector proxy wants an Origin on loopback; Node's WebSocket (undici) sends none unless told.
  const socket = new WebSocket(url, { headers: { Origin: 'http://127.0.0.1' } } as unknown as string[]);
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve, { once: true });
    socket.addEventListener('error', reject, { once: true });
  });
  let nextId = 1;
  const waiting = new Map<number, (result: unknown) => void>();
  const scripts: { scriptId: string; url: string }[] = [];
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as {
      id?: number;
      method?: string;
      params?: { scriptId: string; url: string };
      result?: unknown;
      error?: unknown;
    };
    if (message.method === 'Debugger.scriptParsed' && message.params) scripts.push(message.params);
    if (message.id === undefined) return;
    waiting.get(message.id)?.(message.error ? Promise.reject(new Error(JSON.stringify(message.error))) : message.result);
    waiting.delete(message.id);
  });
  // A worker that crashed, or an inspector that never answers, must not hang the bench.
  const post = (method: string, params: object = {}) =>
    new Promise<unknown>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error(`the worker's inspector did not answer ${method} within 60 s`));
      }, 60_000);
      waiting.set(id, (result) => {
        clearTimeout(timer);
        resolve(result);
      });
      socket.send(JSON.stringify({ id, method, params }));
    });
  return {
    async start() {
      await post('Profiler.enable');
      // workerd's default interval is coarse; 250 µs gives enough samples for a phase of seconds.
      await post('Profiler.setSamplingInterval', { interval: 250 });
      await post('Profiler.start');
    },
    /** Writes the profile, and the worker's bundle beside it (FILE.source.js) to name the modules its lines belong to. */
    async stop(file: string) {
      const { profile } = (await post('Profiler.stop')) as { profile: unknown };
      writeFileSync(file, JSON.stringify(profile));
      await post('Debugger.enable');
      const bundle = scripts.find((script) => script.url.endsWith('index.js'));
      if (bundle) {
        const { scriptSource } = (await post('Debugger.getScriptSource', { scriptId: bundle.scriptId })) as {
          scriptSource: string;
        };
        writeFileSync(`${file}.source.js`, scriptSource);
      }
      await post('Debugger.disable');
      socket.close();
    },
  };
}
