import type { Sql } from '../db/client.ts';
import { createCollectionRepo } from '../db/collections.ts';
import { createMemberRepo } from '../db/members.ts';
import { createSessionRepo } from '../db/sessions.ts';
import { createShareRepo } from '../db/shares.ts';
import { createAccessService } from './access.ts';
import { createChatService } from './chat.ts';
import { createCollectionService } from './collections.ts';
import { createSharingService } from './sharing.ts';

/** Everything a request may use, built per request around its database client. */
export function buildServices(sql: Sql) {
  const collections = createCollectionRepo(sql);
  const shares = createShareRepo(sql);
  const members = createMemberRepo(sql);
  const sessions = createSessionRepo(sql);
  const access = createAccessService(collections);
  return {
    access,
    collections: createCollectionService({ collections, access }),
    sharing: createSharingService({ access, collections, shares, members }),
    chat: createChatService({ access, sessions, members }),
  };
}

export type Services = ReturnType<typeof buildServices>;
