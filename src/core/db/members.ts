import type { Sql } from './client.ts';
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
     * Inserts the membership unless one exists. The primary key makes concurrent
     * joins of the same user produce exactly one row; the loser sees `inserted: false`.
     */
    async join(
      collectionId: string,
      userId: string,
      permission: Permission,
      shareId: string,
    ): Promise<{ inserted: boolean; permission: Permission }> {
      const [inserted] = await sql<{ permission: Permission }[]>`
        insert into collection_members (collection_id, user_id, permission, share_id)
        values (${collectionId}, ${userId}, ${permission}, ${shareId})
        on conflict (collection_id, user_id) do nothing
        returning permission`;
      if (inserted) return { inserted: true, permission: inserted.permission };
      const [existing] = await sql<{ permission: Permission }[]>`
        select permission from collection_members where collection_id = ${collectionId} and user_id = ${userId}`;
      return { inserted: false, permission: existing?.permission ?? permission };
    },

    /** Removes the member and their chat sessions in this collection, together or not at all. */
    remove(collectionId: string, userId: string): Promise<boolean> {
      return sql.begin(async (tx) => {
        const removed = await tx`
          delete from collection_members where collection_id = ${collectionId} and user_id = ${userId} returning user_id`;
        if (removed.length === 0) return false;
        await tx`delete from chat_sessions where collection_id = ${collectionId} and user_id = ${userId}`;
        return true;
      });
    },
  };
}

export type MemberRepo = ReturnType<typeof createMemberRepo>;
