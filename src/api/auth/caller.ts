/** Who is calling, from a verified access token. `id` is the token's `sub`. */
export interface Caller {
  id: string;
  email: string | null;
  isAdmin: boolean;
}
