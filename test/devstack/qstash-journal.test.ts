/** The QStash devstack's state on disk: a journal of changes, folded into a snapshot as it grows. */
import { appendFile, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createStateWriter, type PersistedState, readState } from '../../devstack/qstash/state-file.ts';
import type { StoredMessage } from '../../devstack/qstash/types.ts';

let dir: string;
let file: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'qstash-journal-'));
  file = join(dir, 'state.json');
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const message = (id: string, retried = 0): StoredMessage => ({
  messageId: id,
  url: 'http://127.0.0.1:1/step',
  method: 'POST',
  headers: { 'Content-Type': 'application/json' },
  body: Buffer.from(`{"id":"${id}"}`).toString('base64'),
  maxRetries: 3,
  retried,
  createdAt: 1,
  notBefore: 1,
});

/** A state kept in memory as the engine keeps it, written through the journal. */
function engineLike() {
  const messages = new Map<string, StoredMessage>();
  const state = (): PersistedState => ({ version: 1, messages: [...messages.values()], dlq: [], dedup: [], dlqSeq: 0 });
  const writer = createStateWriter(file, state);
  return {
    writer,
    put(m: StoredMessage) {
      messages.set(m.messageId, m);
      writer.record({ put: m });
    },
    drop(id: string) {
      messages.delete(id);
      writer.record({ drop: id });
    },
    state,
  };
}

describe('QStash state journal', () => {
  it('reads back what was saved: puts, updates, drops and dedup ids', async () => {
    const engine = engineLike();
    engine.put(message('a'));
    engine.put(message('b'));
    engine.put(message('a', 2));
    engine.drop('b');
    engine.writer.record({ dedup: { key: 'k', messageId: 'a', expiresAt: 9 } });
    await engine.writer.save();
    const read = readState(file);
    expect(read?.messages).toEqual([message('a', 2)]);
    expect(read?.dedup).toEqual([{ key: 'k', messageId: 'a', expiresAt: 9 }]);
  });

  it('costs a line per change, and folds the journal into a snapshot once it outgrows the state', async () => {
    const engine = engineLike();
    for (let i = 0; i < 900; i++) {
      engine.put(message(`m${i}`));
      engine.drop(`m${i}`);
      await engine.writer.save();
    }
    // 1,800 changes for an empty state: a snapshot has replaced the first thousand or so lines.
    const journal = await readFile(`${file}.journal`, 'utf8');
    expect(journal.split('\n').length).toBeLessThan(1_001);
    expect((await stat(file)).size).toBeGreaterThan(0);
    engine.put(message('last'));
    await engine.writer.save();
    expect(readState(file)?.messages.map((m) => m.messageId)).toEqual(['last']);
  });

  it('leaves out a last line cut short by a crash', async () => {
    const engine = engineLike();
    engine.put(message('kept'));
    await engine.writer.save();
    await appendFile(`${file}.journal`, '{"put":{"messageId":"torn"');
    expect(readState(file)?.messages.map((m) => m.messageId)).toEqual(['kept']);
  });
});
