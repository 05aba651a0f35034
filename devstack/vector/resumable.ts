import { VectorError } from './errors.ts';
import type { VectorQuery } from './types.ts';

export interface ResumableSession {
  namespace: string;
  query: VectorQuery;
  /** Results handed out so far. */
  served: number;
  maxIdleMs: number;
}

/** Open resumable queries by uuid; one idle longer than its maxIdle is gone. */
export class ResumableQueries {
  private readonly sessions = new Map<string, ResumableSession & { lastUsed: number }>();

  start(session: ResumableSession): string {
    this.prune();
    const uuid = crypto.randomUUID();
    this.sessions.set(uuid, { ...session, lastUsed: Date.now() });
    return uuid;
  }

  get(uuid: string): ResumableSession {
    this.prune();
    const session = this.sessions.get(uuid);
    if (!session) throw new VectorError(404, `Resumable query ${uuid} does not exist or has expired`);
    session.lastUsed = Date.now();
    return session;
  }

  end(uuid: string): void {
    this.get(uuid);
    this.sessions.delete(uuid);
  }

  private prune(): void {
    const now = Date.now();
    for (const [uuid, session] of this.sessions) if (now - session.lastUsed > session.maxIdleMs) this.sessions.delete(uuid);
  }
}
