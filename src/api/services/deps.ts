import type { Adapters } from '#core/adapters/index.ts';
import type { CollectionRepo } from '#core/db/collections.ts';
import type { DocumentRepo } from '#core/db/documents.ts';
import type { EvaluationRepo } from '#core/db/evaluations.ts';
import type { MemberRepo } from '#core/db/members.ts';
import type { SessionRepo } from '#core/db/sessions.ts';
import type { ShareRepo } from '#core/db/shares.ts';
import type { AccessService } from './access.ts';
import type { Audit } from './audit.ts';

/** What the services are built from, each named once; a service picks the parts it uses. */
export interface ServiceDeps extends Pick<Adapters, 'models' | 'store' | 'vectors'> {
  access: AccessService;
  /** Records security-relevant actions after they succeed, for this request (audit.ts). */
  audit: Audit;
  collections: CollectionRepo;
  documents: DocumentRepo;
  evaluations: EvaluationRepo;
  members: MemberRepo;
  sessions: SessionRepo;
  shares: ShareRepo;
}
