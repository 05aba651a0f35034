import type { Sql, Tx } from './client.ts';
import type { Permission } from './shares.ts';

export interface MemberRow {
  user_id: string;
  email: string | null;
  permission: Permission;
  created_at: string;
}

export interface ParticipantRow {
  user_id: string;
  email: string | null;
  role: 'owner' | 'member';
  permission: Permission | null;
}

/** What a join through a share did. `gone`: the link was revoked or its collection deleted meanwhile. */
export type JoinOutcome =
  | { outcome: 'joined' | 'already_member'; permission: Permission }
  | { outcome: 'removed' | 'expired' | 'used_up' | 'gone' };

export function createMemberRepo(sql: Sql) {
  return {
    /** Emails come from auth.users, which lives in the same database as on Supabase. */
    list(collectionId: string): Promise<MemberRow[]> {
      return sql<MemberRow[]>`
        select m.user_id, u.email, m.permission, m.created_at
          from collection_members m left join auth.users u on u.id = m.user_id
         where m.collection_id = ${collectionId}
         order by m.created_at, m.user_id`;
    },

    /** The owner and every member, with their role. */
    participants(collectionId: string): Promise<ParticipantRow[]> {
      return sql<ParticipantRow[]>`
        select c.user_id, u.email, 'owner' as role, null as permission, 0 as sort, c.created_at as joined
          from collections c left join auth.users u on u.id = c.user_id
         where c.id = ${collectionId}
        union all
        select m.user_id, u.email, 'member', m.permission, 1, m.created_at
          from collection_members m left join auth.users u on u.id = m.user_id
         where m.collection_id = ${collectionId}
        order by sort, joined, user_id`.then((rows) =>
        rows.map(({ user_id, email, role, permission }) => ({ user_id, email, role, permission })),
      );
    },

    /**
     * Joins through a share in one transaction. The use is counted by a single conditional
     * UPDATE, whose row lock makes concurrent joins racing for a link's last use take turns,
     * so exactly `max_uses` of them get in. The membership's primary key makes concurrent
     * joins of the same user produce one row. Removal is checked after the insert: an insert
     * that waited for a concurrent removal of the same member sees that removal's record.
     * A join that adds nobody gives its use back before it commits.
     */
    join(collectionId: string, shareId: string, userId: string): Promise<JoinOutcome> {
      return sql.begin(async (tx) => {
        if (!(await lockCollection(tx, collectionId))) return { outcome: 'gone' };
        const [share] = await tx<{ permission: Permission }[]>`
          update collection_shares set uses = uses + 1
           where id = ${shareId} and collection_id = ${collectionId}
             and (max_uses is null or uses < max_uses)
             and (expires_at is null or expires_at > now())
          returning permission`;
        if (!share) return refusal(tx, shareId, userId);
        const [inserted] = await tx<{ permission: Permission }[]>`
          insert into collection_members (collection_id, user_id, permission, share_id)
          values (${collectionId}, ${userId}, ${share.permission}, ${shareId})
          on conflict (collection_id, user_id) do nothing
          returning permission`;
        if (inserted && !(await removedSinceShare(tx, shareId, userId))) {
          return { outcome: 'joined', permission: inserted.permission };
        }
        if (inserted) await tx`delete from collection_members where collection_id = ${collectionId} and user_id = ${userId}`;
        await tx`update collection_shares set uses = uses - 1 where id = ${shareId}`;
        return refusal(tx, shareId, userId);
      });
    },

    /**
     * Removes the member and their chat sessions in this collection, together or not at all,
     * and records when, so that no link made until now lets them back in.
     */
    remove(collectionId: string, userId: string): Promise<boolean> {
      return sql.begin(async (tx) => {
        if (!(await lockCollection(tx, collectionId))) return false;
        const removed = await tx`
          delete from collection_members where collection_id = ${collectionId} and user_id = ${userId} returning user_id`;
        if (removed.length === 0) return false;
        await tx`delete from chat_sessions where collection_id = ${collectionId} and user_id = ${userId}`;
        await tx`
          insert into collection_removals (collection_id, user_id, removed_at) values (${collectionId}, ${userId}, now())
          on conflict (collection_id, user_id) do update set removed_at = excluded.removed_at`;
        return true;
      });
    },
  };
}

/**
 * Takes the collection row's key-share lock before any other. A collection's deletion locks
 * that row first and then cascades to shares and members; taking locks in the same order
 * keeps a join or a removal from deadlocking with it. False if the collection is gone.
 */
async function lockCollection(tx: Tx, collectionId: string): Promise<boolean> {
  const rows = await tx`select 1 from collections where id = ${collectionId} for key share`;
  return rows.length > 0;
}

/** Whether the user was removed from the share's collection at or after the share was made. */
async function removedSinceShare(tx: Tx, shareId: string, userId: string): Promise<boolean> {
  const [row] = await tx<{ removed: boolean }[]>`
    select exists (select 1 from collection_shares s join collection_removals r on r.collection_id = s.collection_id
                    where s.id = ${shareId} and r.user_id = ${userId} and r.removed_at >= s.created_at) as removed`;
  return row?.removed ?? false;
}

/**
 * Why a join added nobody, in order of precedence: being in already wins, then a removal.
 * The conditional UPDATE refuses for expiry, for uses or because the link is gone; when none
 * holds any more, another join gave back the last use meanwhile, and trying again would work.
 */
async function refusal(tx: Tx, shareId: string, userId: string): Promise<JoinOutcome> {
  const [state] = await tx<{ member_permission: Permission | null; expired: boolean }[]>`
    select (select m.permission from collection_members m
             where m.collection_id = s.collection_id and m.user_id = ${userId}) as member_permission,
           coalesce(s.expires_at <= now(), false) as expired
      from collection_shares s where s.id = ${shareId}`;
  if (!state) return { outcome: 'gone' };
  if (state.member_permission) return { outcome: 'already_member', permission: state.member_permission };
  if (await removedSinceShare(tx, shareId, userId)) return { outcome: 'removed' };
  return { outcome: state.expired ? 'expired' : 'used_up' };
}

export type MemberRepo = ReturnType<typeof createMemberRepo>;
