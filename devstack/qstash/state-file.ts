import { mkdirSync, readFileSync } from 'node:fs';
import { appendFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { EngineState } from './engine.ts';
import type { DedupRecord, DlqEntry, StoredMessage } from './types.ts';

export interface SigningKeys {
  current: string;
  next: string;
}

export interface PersistedState extends EngineState {
  version: 1;
  /** Rotated keys, with the configured pair they came from: they apply only while that pair is still configured. */
  keys?: { configured: SigningKeys; active: SigningKeys };
}

/** One change of the state, as the journal records it. Each is safe to apply twice. */
export type StateChange =
  | { put: StoredMessage }
  | { drop: string }
  | { dlqPut: DlqEntry }
  | { dlqDrop: string }
  | { dedup: DedupRecord }
  | { keys: NonNullable<PersistedState['keys']> };

const journalOf = (file: string) => `${file}.journal`;

/**
 * The saved state, or undefined when there is none yet: the last snapshot with the journal of
 * changes since replayed over it. A file that is not ours is an error, not an empty queue.
 */
export function readState(file: string): PersistedState | undefined {
  const snapshot = readSnapshot(file);
  const lines = readJournal(journalOf(file));
  if (!snapshot && lines.length === 0) return undefined;
  const state = snapshot ?? { version: 1, messages: [], dlq: [], dedup: [], dlqSeq: 0 };
  return lines.length === 0 ? state : replay(state, lines);
}

function readSnapshot(file: string): PersistedState | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`QStash devstack: cannot read state file ${file}: ${(error as Error).message}`);
  }
  let state: Partial<PersistedState>;
  try {
    state = JSON.parse(text) as Partial<PersistedState>;
  } catch (error) {
    throw new Error(
      `QStash devstack: state file ${file} is not valid JSON (${(error as Error).message}); move it away to start empty`,
    );
  }
  const valid =
    state?.version === 1 &&
    Array.isArray(state.messages) &&
    Array.isArray(state.dlq) &&
    Array.isArray(state.dedup) &&
    typeof state.dlqSeq === 'number' &&
    state.messages.every((m) => typeof m?.messageId === 'string' && typeof m.url === 'string' && typeof m.body === 'string') &&
    state.dlq.every((e) => typeof e?.dlqId === 'string' && typeof e.message?.messageId === 'string');
  if (!valid)
    throw new Error(`QStash devstack: ${file} is not a QStash devstack state file (version 1); move it away to start empty`);
  return state as PersistedState;
}

/** The journal's changes; a last line cut short by a crash is left out, as it was never acknowledged. */
function readJournal(file: string): StateChange[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new Error(`QStash devstack: cannot read journal ${file}: ${(error as Error).message}`);
  }
  // Every entry ends with a newline: what follows the last one is empty, or a cut-off entry.
  return text
    .split('\n')
    .slice(0, -1)
    .map((line, index) => {
      try {
        return JSON.parse(line) as StateChange;
      } catch {
        throw new Error(`QStash devstack: ${file} line ${index + 1} is not a journal entry; move it away to start empty`);
      }
    });
}

function replay(state: PersistedState, changes: StateChange[]): PersistedState {
  const messages = new Map(state.messages.map((m) => [m.messageId, m]));
  const dlq = new Map(state.dlq.map((e) => [e.dlqId, e]));
  const dedup = new Map(state.dedup.map((d) => [d.key, d]));
  let { dlqSeq, keys } = state;
  for (const change of changes) {
    if ('put' in change) messages.set(change.put.messageId, change.put);
    else if ('drop' in change) messages.delete(change.drop);
    else if ('dlqPut' in change) {
      dlq.set(change.dlqPut.dlqId, change.dlqPut);
      dlqSeq = Math.max(dlqSeq, change.dlqPut.seq);
    } else if ('dlqDrop' in change) dlq.delete(change.dlqDrop);
    else if ('dedup' in change) dedup.set(change.dedup.key, change.dedup);
    else if ('keys' in change) keys = change.keys;
  }
  return { version: 1, messages: [...messages.values()], dlq: [...dlq.values()], dedup: [...dedup.values()], dlqSeq, keys };
}

/** Journal lines allowed since the last snapshot, beyond this many per live record, before a new snapshot. */
const LINES_PER_RECORD = 4;
const MIN_LINES_BEFORE_SNAPSHOT = 1_000;

/**
 * Saves the state as a journal: each change is one appended line, so saving costs what changed,
 * not the whole state (which grows with every deduplication id for ten minutes). When the journal
 * is several times longer than the state, a snapshot replaces it (temp file, then rename; the
 * journal is emptied after, and replaying it twice would do no harm). Saves coalesce: while one
 * write runs, later changes share the next, and the promise save() returns settles only once a
 * write that includes the caller's change is on disk.
 */
export function createStateWriter(file: string, snapshot: () => PersistedState) {
  mkdirSync(dirname(file), { recursive: true });
  const journal = journalOf(file);
  const temp = `${file}.${process.pid}.tmp`;
  let pending: string[] = [];
  // A journal left by the last run counts towards the next snapshot.
  let linesSinceSnapshot = readJournal(journal).length;
  let liveAtSnapshot = 0;
  let writing: Promise<void> | undefined;

  const loop = async () => {
    try {
      while (pending.length > 0) {
        const lines = pending;
        pending = [];
        if (linesSinceSnapshot + lines.length > Math.max(MIN_LINES_BEFORE_SNAPSHOT, LINES_PER_RECORD * liveAtSnapshot)) {
          // The snapshot already holds these changes.
          const state = snapshot();
          await writeFile(temp, JSON.stringify(state));
          await rename(temp, file);
          await writeFile(journal, '');
          linesSinceSnapshot = 0;
          liveAtSnapshot = state.messages.length + state.dlq.length + state.dedup.length;
        } else {
          await appendFile(journal, lines.join(''));
          linesSinceSnapshot += lines.length;
        }
      }
    } finally {
      writing = undefined;
    }
  };

  return {
    /** Notes a change; the next save() writes it. */
    record(change: StateChange): void {
      pending.push(`${JSON.stringify(change)}\n`);
    },
    /** Resolves once every change recorded so far is on disk: the loop runs until none is left. */
    save(): Promise<void> {
      writing ??= loop();
      return writing;
    },
  };
}
