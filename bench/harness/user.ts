/**
 * The user bench/retrieval/retrieval.ts and the benchmarks built on it act as: an admin (PUT config is admin only), for
 * as long as the run takes.
 */
import type { Method, ResponseBody, Schema, TypedResponse } from '../../devstack/harness/api-call.ts';
import { grantAdmin, signIn, signUpUser } from '../../devstack/harness/auth-client.ts';
import type { BenchStack } from './stack.ts';

export class User {
  token = '';
  readonly email = `bench-retrieval-${crypto.randomUUID().slice(0, 8)}@example.com`;

  /** `apiUrl`: another API worker of the same stack (a different RETRIEVAL_FUSION). */
  constructor(
    private readonly stack: BenchStack,
    private readonly apiUrl = stack.apiUrl,
  ) {}

  /** The same user, talking to another API worker. */
  at(apiUrl: string): User {
    const user = new User(this.stack, apiUrl);
    Object.assign(user, { email: this.email, token: this.token });
    return user;
  }

  async signUpAsAdmin(): Promise<void> {
    const { id } = await signUpUser(this.stack, this.email);
    await grantAdmin(this.stack, id);
    await this.signIn();
  }

  /** A fresh token that carries is_admin; also how a long run outlives the token's hour. */
  async signIn(): Promise<void> {
    this.token = (await signIn(this.stack, this.email)).token;
  }

  /**
   * A call to the API, its `json()` typed by the description; a 401 (the token expired mid-run) signs in again and
   * retries once. The body is left unread, for callers that time it.
   */
  async call<M extends Method, P extends string>(
    path: P,
    init: { method: M; json?: unknown; form?: () => FormData },
  ): Promise<TypedResponse<ResponseBody<M, P>>> {
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = { Authorization: `Bearer ${this.token}` };
      let body: BodyInit | undefined;
      if (init.json !== undefined) {
        headers['Content-Type'] = 'application/json';
        body = JSON.stringify(init.json);
      } else if (init.form) {
        body = init.form();
      }
      const response = await fetch(`${this.apiUrl}${path}`, { method: init.method, headers, body });
      if (response.status !== 401 || attempt > 0) return response;
      await response.body?.cancel();
      await this.signIn();
    }
  }

  async putConfig(
    collectionId: string,
    chunkSize: number,
    strategy: Schema<'RetrievalConfig'>['retrieval_strategy'],
  ): Promise<void> {
    const response = await this.call(`/collections/${collectionId}/config`, {
      method: 'PUT',
      json: { chunk_size: chunkSize, retrieval_strategy: strategy },
    });
    if (!response.ok) throw new Error(`PUT config failed: ${response.status} ${await response.text()}`);
  }
}
