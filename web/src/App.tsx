import { QueryClient, QueryClientProvider } from '@tanstack/preact-query';
import type { ComponentChildren, ComponentType } from 'preact';
import { useEffect } from 'preact/hooks';
import { LocationProvider, lazy, Route, Router, useLocation } from 'preact-iso';
import { ChatPage } from './chat/ChatPage.tsx';
import { canWrite, useCollections } from './collections.ts';
import { CollectionSettings } from './pages/CollectionSettings.tsx';
import { Collections } from './pages/Collections.tsx';
import { Documents } from './pages/Documents.tsx';
import { Join } from './pages/Join.tsx';
import { Login } from './pages/Login.tsx';
import { Quality } from './pages/Quality.tsx';
import { Settings } from './pages/Settings.tsx';
import { Sharing } from './pages/Share.tsx';
import { loginUrl, useSession } from './session.ts';
import { Shell } from './shell/Shell.tsx';

const queries = new QueryClient({ defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false } } });

/** The signed-in app, in the shell: anyone else goes to /login, and comes back here after signing in. */
function SignedIn({ children }: { children: ComponentChildren }) {
  const session = useSession();
  const { url, route } = useLocation();
  useEffect(() => {
    if (session === null) route(loginUrl(url), true);
  }, [session, url, route]);
  if (!session) return <p class="narrow">Loading…</p>;
  return <Shell email={session.user.email ?? ''}>{children}</Shell>;
}

type CollectionPageProps = { params: { id: string } };

/** A page of one collection: the collection as the caller may use it, or why it cannot be shown. */
function ofCollection(Page: ComponentType<{ collectionId: string; canWrite: boolean; owner: boolean }>) {
  return function CollectionPage({ params }: CollectionPageProps) {
    const collections = useCollections();
    const collection = collections.data?.find((c) => c.id === params.id);
    if (collections.isPending) return <p>Loading…</p>;
    if (!collection) return <NotFound what="collection" />;
    return (
      <>
        <p class="crumb">
          <a href={`/app/c/${collection.id}`}>{collection.name}</a>
        </p>
        <Page collectionId={collection.id} canWrite={canWrite(collection)} owner={!collection.shared} />
      </>
    );
  };
}

function NotFound({ what = 'page' }: { what?: string }) {
  return (
    <section class="narrow">
      <h1>Not found</h1>
      <p>
        {what === 'page'
          ? 'There is no page here.'
          : 'This collection does not exist, or it is not yours to use: ask its owner for an invitation.'}{' '}
        <a href="/app/">Start a new chat</a>.
      </p>
    </section>
  );
}

const Home = () => <ChatPage collectionId={null} sessionId={null} personal={false} />;
const Personal = () => <ChatPage collectionId={null} sessionId={null} personal />;
const PersonalDocuments = () => <Documents collectionId={null} canWrite owner />;
// The sources page is a chunk of its own, loaded when first opened: it is no part of the first page's weight.
const Sources = lazy(() => import('./sources/SourcesPage.tsx'));
const PersonalSources = () => <Sources collectionId={null} />;
// Usage and administration are chunks of their own too, for the few visits they get.
const Usage = lazy(() => import('./usage/UsagePage.tsx'));
const Admin = lazy(() => import('./admin/AdminPage.tsx'));
// Keyed by chat: a new chat, or another one, starts from a clean page.
const CollectionChat = ({ params }: { params: { id: string; session?: string } }) => (
  <ChatPage key={params.session ?? params.id} collectionId={params.id} sessionId={params.session ?? null} personal={false} />
);
const DocumentsPage = ofCollection(({ collectionId, canWrite, owner }) => (
  <Documents collectionId={collectionId} canWrite={canWrite} owner={owner} />
));
const SharingPage = ofCollection(({ collectionId, owner }) => (owner ? <Sharing collectionId={collectionId} /> : <NotFound />));
const QualityPage = ofCollection(({ collectionId, owner }) => <Quality collectionId={collectionId} isOwner={owner} />);
const SourcesPage = ofCollection(({ collectionId, canWrite }) =>
  canWrite ? <Sources collectionId={collectionId} /> : <NotFound />,
);
const CollectionSettingsPage = ofCollection(CollectionSettings);

function Pages() {
  const { path } = useLocation();
  if (path === '/login') return <Login />;
  return (
    <SignedIn>
      <Router>
        <Route path="/app" component={Home} />
        <Route path="/app/" component={Home} />
        <Route path="/app/personal" component={Personal} />
        <Route path="/app/personal/documents" component={PersonalDocuments} />
        <Route path="/app/personal/sources" component={PersonalSources} />
        <Route path="/app/collections" component={Collections} />
        <Route path="/app/c/:id" component={CollectionChat} />
        <Route path="/app/c/:id/chat/:session" component={CollectionChat} />
        <Route path="/app/c/:id/documents" component={DocumentsPage} />
        <Route path="/app/c/:id/sources" component={SourcesPage} />
        <Route path="/app/c/:id/sharing" component={SharingPage} />
        <Route path="/app/c/:id/quality" component={QualityPage} />
        <Route path="/app/c/:id/settings" component={CollectionSettingsPage} />
        <Route path="/app/settings" component={Settings} />
        <Route path="/app/usage" component={Usage} />
        <Route path="/app/admin" component={Admin} />
        <Route path="/join/:token" component={Join} />
        <Route default component={NotFound} />
      </Router>
    </SignedIn>
  );
}

export function App() {
  return (
    <QueryClientProvider client={queries}>
      <LocationProvider>
        <Pages />
      </LocationProvider>
    </QueryClientProvider>
  );
}
