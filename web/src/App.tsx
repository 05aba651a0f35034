import { QueryClient, QueryClientProvider } from '@tanstack/preact-query';
import type { ComponentType } from 'preact';
import { useEffect } from 'preact/hooks';
import { LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { Collection } from './pages/Collection.tsx';
import { Collections } from './pages/Collections.tsx';
import { Join } from './pages/Join.tsx';
import { Login } from './pages/Login.tsx';
import { Settings } from './pages/Settings.tsx';
import { auth, loginUrl, useSession } from './session.ts';

const queries = new QueryClient({ defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false } } });

/** A page for signed-in people: anyone else goes to /login, and comes back here after signing in. */
function signedIn<Props extends object>(Page: ComponentType<Props>) {
  return function Guarded(props: Props) {
    const session = useSession();
    const { url, path, route } = useLocation();
    useEffect(() => {
      if (session === null) route(loginUrl(url), true);
    }, [session, url, route]);
    if (!session) return <p class="narrow">Loading…</p>;
    return (
      <>
        <header class="bar">
          <a href="/app/" class="brand">
            RAG service
          </a>
          <a href="/app/settings" aria-current={path === '/app/settings' ? 'page' : undefined}>
            API keys &amp; webhooks
          </a>
          <span class="grow" />
          <span class="who">{session.user.email}</span>
          <button
            type="button"
            onClick={async () => {
              await auth().signOut();
              queries.clear();
              route('/login', true);
            }}
          >
            Sign out
          </button>
        </header>
        <Page {...props} />
      </>
    );
  };
}

const CollectionsPage = signedIn(Collections);
const CollectionPage = signedIn(Collection);
const JoinPage = signedIn(Join);
const SettingsPage = signedIn(Settings);

function NotFound() {
  return (
    <main class="narrow">
      <h1>Not found</h1>
      <p>
        There is no page here. <a href="/app/">Go to your collections</a>.
      </p>
    </main>
  );
}

export function App() {
  return (
    <QueryClientProvider client={queries}>
      <LocationProvider>
        <Router>
          <Route path="/login" component={Login} />
          <Route path="/app" component={CollectionsPage} />
          <Route path="/app/" component={CollectionsPage} />
          <Route path="/app/personal" component={CollectionPage} />
          <Route path="/app/c/:id" component={CollectionPage} />
          <Route path="/app/settings" component={SettingsPage} />
          <Route path="/join/:token" component={JoinPage} />
          <Route default component={NotFound} />
        </Router>
      </LocationProvider>
    </QueryClientProvider>
  );
}
