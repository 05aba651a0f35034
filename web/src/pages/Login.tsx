import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { Failure } from '../Failure.tsx';
import { auth } from '../session.ts';

/** Only a path of this app: `next` comes from the URL, and must not send anyone to another site. */
const safeNext = (next: string | undefined) => (next?.startsWith('/') && !next.startsWith('//') ? next : '/app/');

export function Login() {
  const { query, route } = useLocation();
  const [mode, setMode] = useState<'in' | 'up'>('in');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: SubmitEvent) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const credentials = { email: String(form.get('email')), password: String(form.get('password')) };
    setBusy(true);
    setError(null);
    const { data, error: failed } =
      mode === 'in' ? await auth().signInWithPassword(credentials) : await auth().signUp(credentials);
    setBusy(false);
    if (failed) return setError(failed.message);
    if (!data.session) return setError('Check your email to confirm the account, then sign in.');
    route(safeNext(query.next), true);
  }

  return (
    <main class="narrow">
      <h1>{mode === 'in' ? 'Sign in' : 'Create an account'}</h1>
      <form onSubmit={submit} class="stack">
        <label>
          Email
          <input name="email" type="email" autocomplete="email" required />
        </label>
        <label>
          Password
          <input
            name="password"
            type="password"
            autocomplete={mode === 'in' ? 'current-password' : 'new-password'}
            minLength={6}
            required
          />
        </label>
        <Failure error={error} />
        <button type="submit" disabled={busy}>
          {mode === 'in' ? 'Sign in' : 'Create account'}
        </button>
      </form>
      <p>
        {mode === 'in' ? 'No account yet? ' : 'Have an account? '}
        <button type="button" class="link" onClick={() => setMode(mode === 'in' ? 'up' : 'in')}>
          {mode === 'in' ? 'Create one' : 'Sign in'}
        </button>
      </p>
    </main>
  );
}
