import { mkdirSync, readFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { EngineState } from './engine.ts';

export interface SigningKeys {
  current: string;
  next: string;
}

export interface PersistedState extends EngineState {
  version: 1;
  /** Rotated keys, with the configured pair they came from: they apply only while that pair is still configured. */
  keys?: { configured: SigningKeys; active: SigningKeys };
}

/** The saved state, or undefined when there is none yet. A file that is not ours is an error, not an empty queue. */
export function readState(file: string): PersistedState | undefined {
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

/**
 * Saves the state atomically (temp file, then rename). Saves coalesce: while one
 * write runs, later changes share the next one, and the promise save() returns
 * settles only once a write that includes the caller's change is on disk.
 */
export function createStateWriter(file: string, snapshot: () => PersistedState) {
  mkdirSync(dirname(file), { recursive: true });
  let dirty = false;
  let writing: Promise<void> | undefined;

  const loop = async () => {
    try {
      while (dirty) {
        dirty = false;
        const temp = `${file}.${process.pid}.tmp`;
        await writeFile(temp, JSON.stringify(snapshot()));
        await rename(temp, file);
      }
    } finally {
      writing = undefined;
    }
  };

  return {
    save(): Promise<void> {
      dirty = true;
      writing ??= loop();
      return writing;
    },
  };
}
