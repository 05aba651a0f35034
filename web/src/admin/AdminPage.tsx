import { useSession } from '../session.ts';
import { AuditSection } from './Audit.tsx';
import { useEmails } from './emails.ts';
import { JobsSection } from './Jobs.tsx';
import { OverviewSection } from './Overview.tsx';
import { UsersSection } from './Users.tsx';
import '../usage/usage.css';
import './admin.css';

function AdminSections({ me }: { me: string }) {
  const emails = useEmails();
  return (
    <>
      <OverviewSection />
      <UsersSection />
      <JobsSection />
      <AuditSection emails={emails} me={me} />
    </>
  );
}

/**
 * /app/admin: the deployment for its administrators (`app_metadata.is_admin` in their token): counts, users and their
 * usage, stuck and failed jobs with a retry, and the audit log. Anyone else is told it is not for them (the API
 * refuses them too). Loaded as a chunk of its own (App.tsx).
 */
export function AdminPage() {
  const session = useSession();
  if (session === undefined) return <p>Loading…</p>;
  if (session?.user.app_metadata?.is_admin !== true) {
    return (
      <section class="stack page" aria-labelledby="admin-title">
        <h1 id="admin-title">Administrators only</h1>
        <p>
          This page is for the administrators of this service, and your account is not one of them. Your own model usage is on{' '}
          <a href="/app/usage">the usage page</a>.
        </p>
      </section>
    );
  }
  return (
    <section class="stack page admin" aria-labelledby="admin-title">
      <h1 id="admin-title">Administration</h1>
      <p>
        Every user’s collections, documents, jobs and model usage, and who did what. Everyone’s usage per day is on the{' '}
        <a href="/app/usage">usage page</a>.
      </p>
      <AdminSections me={session.user.id} />
    </section>
  );
}

export default AdminPage;
