/** The storage devstack's lock: objects of one bucket written side by side, tree changes alone. */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { KeyedMutex } from '../../devstack/storage/lock.ts';

/** Runs a task that records when it starts and ends, holding the lock for `ms`. */
function recorder(log: string[]) {
  return (name: string, ms = 20) =>
    async () => {
      log.push(`${name} start`);
      await sleep(ms);
      log.push(`${name} end`);
      return name;
    };
}

describe('KeyedMutex', () => {
  it('runs shared holders of a key side by side', async () => {
    const lock = new KeyedMutex();
    const log: string[] = [];
    const task = recorder(log);
    const started = performance.now();
    await Promise.all(Array.from({ length: 10 }, (_, i) => lock.runShared('bucket', task(`w${i}`, 50))));
    expect(performance.now() - started).toBeLessThan(400);
    expect(log.slice(0, 10).every((line) => line.endsWith('start'))).toBe(true);
  });

  it('runs an exclusive holder alone, in arrival order with the shared ones', async () => {
    const lock = new KeyedMutex();
    const log: string[] = [];
    const task = recorder(log);
    await Promise.all([
      lock.runShared('bucket', task('a')),
      lock.runShared('bucket', task('b')),
      lock.run('bucket', task('delete')),
      // Arrives after the exclusive one: waits for it rather than overtaking it.
      lock.runShared('bucket', task('c')),
    ]);
    const at = (line: string) => log.indexOf(line);
    expect(at('delete start')).toBeGreaterThan(Math.max(at('a end'), at('b end')));
    expect(at('c start')).toBeGreaterThan(at('delete end'));
  });

  it('keeps other keys free, and frees a key whose task failed', async () => {
    const lock = new KeyedMutex();
    const log: string[] = [];
    const task = recorder(log);
    const held = lock.run('bucket-1', task('long', 100));
    await expect(lock.run('bucket-2', task('other', 1))).resolves.toBe('other');
    expect(log).toEqual(['long start', 'other start', 'other end']);
    await held;
    await expect(lock.run('bucket-1', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(lock.runShared('bucket-1', task('after'))).resolves.toBe('after');
  });
});
