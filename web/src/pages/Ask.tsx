import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { useRef, useState } from 'preact/hooks';
import { answerEvents, citationParts, placeOf, type Source } from '../answer.ts';
import { api, ask, messageOf } from '../api.ts';
import { Failure } from '../Failure.tsx';

interface Session {
  id: string;
  title: string | null;
}
interface Message {
  role: 'user' | 'assistant';
  content: string;
  sources: Source[];
  /** Set while streaming, and when the answer was stopped or failed. */
  note?: string;
}
interface Participant {
  user_id: string;
  email: string | null;
  role: 'owner' | 'member';
}
interface Doc {
  id: string;
  open_url: string | null;
}

/** An answer with each [n] as a button that opens source n. */
function AnswerText({ text, sources, onCite }: { text: string; sources: Source[]; onCite: (n: number) => void }) {
  return (
    <p class="answer">
      {citationParts(text).map((part, i) =>
        typeof part === 'string' ? (
          part
        ) : (
          <button
            key={i}
            type="button"
            class="cite"
            aria-label={`Source ${part}${sources[part - 1] ? `: ${sources[part - 1]?.source}` : ' (not among the sources)'}`}
            onClick={() => onCite(part)}
          >
            [{part}]
          </button>
        ),
      )}
    </p>
  );
}

function Sessions({
  collectionId,
  current,
  onOpen,
}: {
  collectionId: string;
  current: string | null;
  onOpen: (id: string | null) => void;
}) {
  const queries = useQueryClient();
  const key = ['sessions', collectionId];
  const sessions = useQuery({ queryKey: key, queryFn: () => api<Session[]>('GET', `/chat/${collectionId}/sessions`) });
  const members = useQuery({
    queryKey: ['participants', collectionId],
    queryFn: () => api<Participant[]>('GET', `/chat/${collectionId}/members`),
  });
  const refresh = () => queries.invalidateQueries({ queryKey: key });
  const base = `/chat/${collectionId}/sessions`;
  const rename = useMutation({
    mutationFn: ({ id, title }: { id: string; title: string }) => api('PATCH', `${base}/${id}`, { title }),
    onSuccess: refresh,
  });
  const remove = useMutation({
    mutationFn: (id: string) => api('DELETE', `${base}/${id}`),
    onSuccess: (_, id) => {
      if (id === current) onOpen(null);
      return refresh();
    },
  });
  const share = useMutation({
    mutationFn: ({ id, target }: { id: string; target: string }) =>
      api('POST', `${base}/${id}/share`, { target_user_id: target }),
  });
  const chosen = sessions.data?.find((s) => s.id === current);
  const failure = rename.error ?? remove.error ?? share.error ?? sessions.error;

  return (
    <nav aria-label="Chat sessions" class="stack sessions">
      <button type="button" onClick={() => onOpen(null)}>
        New chat
      </button>
      <ul class="plain">
        {sessions.data?.map((session) => (
          <li key={session.id}>
            <button
              type="button"
              class={`link${session.id === current ? ' current' : ''}`}
              aria-current={session.id === current ? 'true' : undefined}
              onClick={() => onOpen(session.id)}
            >
              {session.title ?? 'Untitled chat'}
            </button>
          </li>
        ))}
      </ul>
      {chosen && (
        <div class="stack">
          <form
            class="row"
            onSubmit={(event) => {
              event.preventDefault();
              const title = String(new FormData(event.currentTarget).get('title')).trim();
              if (title) rename.mutate({ id: chosen.id, title });
            }}
          >
            <label class="grow">
              Rename this chat
              <input name="title" maxLength={100} required defaultValue={chosen.title ?? ''} key={chosen.id} />
            </label>
            <button type="submit">Rename</button>
          </form>
          {(members.data?.length ?? 0) > 0 && (
            <form
              class="row"
              onSubmit={(event) => {
                event.preventDefault();
                share.mutate({ id: chosen.id, target: String(new FormData(event.currentTarget).get('target')) });
              }}
            >
              <label class="grow">
                Share a copy with
                <select name="target">
                  {members.data?.map((m) => (
                    <option key={m.user_id} value={m.user_id}>
                      {m.email ?? m.user_id} ({m.role})
                    </option>
                  ))}
                </select>
              </label>
              <button type="submit">Share</button>
            </form>
          )}
          {share.isSuccess && <p role="status">Shared.</p>}
          <button
            type="button"
            class="danger"
            onClick={() => {
              if (confirm(`Delete the chat “${chosen.title ?? 'Untitled chat'}” and its messages?`)) remove.mutate(chosen.id);
            }}
          >
            Delete this chat
          </button>
        </div>
      )}
      <Failure error={failure} />
    </nav>
  );
}

/** Ask in a collection, in its chat sessions; or in the personal space, one question at a time. */
export function Ask({ collectionId }: { collectionId: string | null }) {
  const queries = useQueryClient();
  const [sessionId, setSessionId] = useState<string | null>(null);
  const [messages, setMessages] = useState<Message[]>([]);
  const [streaming, setStreaming] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const [cited, setCited] = useState<{ source: Source | undefined; n: number } | null>(null);
  const stopper = useRef<AbortController | null>(null);
  const panel = useRef<HTMLDialogElement>(null);
  const docs = useQuery({
    queryKey: ['documents', collectionId],
    queryFn: () => api<Doc[]>('GET', collectionId ? `/collections/${collectionId}/documents` : '/ingest/documents'),
  });

  async function open(id: string | null) {
    setSessionId(id);
    setFailure(null);
    if (!id || !collectionId) return setMessages([]);
    try {
      setMessages(await api<Message[]>('GET', `/chat/${collectionId}/sessions/${id}`));
    } catch (error) {
      setFailure(messageOf(error));
    }
  }

  const setLast = (change: (last: Message) => Message) =>
    setMessages((all) => [...all.slice(0, -1), change(all[all.length - 1] as Message)]);

  async function submit(question: string) {
    setFailure(null);
    const controller = new AbortController();
    stopper.current = controller;
    setStreaming(true);
    setMessages((all) => [
      ...all,
      { role: 'user', content: question, sources: [] },
      { role: 'assistant', content: '', sources: [], note: 'Answering…' },
    ]);
    try {
      let session = sessionId;
      // In a collection every question goes into a session, so that follow-ups have their history.
      if (collectionId && !session) {
        session = (await api<Session>('POST', `/chat/${collectionId}/sessions`)).id;
        setSessionId(session);
      }
      const body = await ask(
        { question, ...(collectionId ? { collection_id: collectionId, session_id: session } : {}) },
        controller.signal,
      );
      for await (const event of answerEvents(body)) {
        if (event.type === 'metadata') setLast((last) => ({ ...last, sources: event.sources }));
        else if (event.type === 'token') setLast((last) => ({ ...last, content: last.content + event.token }));
        else if (event.type === 'done') setLast((last) => ({ ...last, note: undefined }));
        else setLast((last) => ({ ...last, note: `The answer could not be finished: ${event.message}.` }));
      }
    } catch (error) {
      const why = controller.signal.aborted ? 'Stopped.' : `Not answered: ${messageOf(error)}`;
      setLast((last) => ({ ...last, note: why }));
    } finally {
      setStreaming(false);
      stopper.current = null;
      if (collectionId) void queries.invalidateQueries({ queryKey: ['sessions', collectionId] });
    }
  }

  function cite(sources: Source[], n: number) {
    setCited({ source: sources[n - 1], n });
    panel.current?.showModal();
  }

  const openUrl = cited?.source?.document_id ? docs.data?.find((d) => d.id === cited.source?.document_id)?.open_url : null;

  return (
    <section aria-labelledby="ask-title" class={collectionId ? 'ask with-sessions' : 'ask'}>
      <h2 id="ask-title">Ask</h2>
      {collectionId && <Sessions collectionId={collectionId} current={sessionId} onOpen={open} />}
      <div class="stack conversation">
        <ol class="plain stack" aria-label="Messages" aria-live="polite">
          {messages.map((m, i) => (
            <li key={i} class={`message ${m.role}`}>
              {m.role === 'user' ? (
                <p>
                  <strong>You:</strong> {m.content}
                </p>
              ) : (
                <AnswerText text={m.content} sources={m.sources} onCite={(n) => cite(m.sources, n)} />
              )}
              {m.note && <p class="note">{m.note}</p>}
            </li>
          ))}
        </ol>
        <form
          class="row"
          onSubmit={(event) => {
            event.preventDefault();
            const form = event.currentTarget;
            const question = String(new FormData(form).get('question')).trim();
            if (question && !streaming) {
              form.reset();
              void submit(question);
            }
          }}
        >
          <label class="grow">
            Your question
            <input name="question" maxLength={2000} required autocomplete="off" />
          </label>
          {streaming ? (
            <button type="button" class="danger" onClick={() => stopper.current?.abort()}>
              Stop
            </button>
          ) : (
            <button type="submit">Ask</button>
          )}
        </form>
        <Failure error={failure} />
      </div>
      <dialog ref={panel} aria-labelledby="source-title" onClose={() => setCited(null)}>
        <form method="dialog" class="stack">
          <h3 id="source-title">
            Source {cited?.n}
            {cited?.source ? `: ${cited.source.source}` : ''}
          </h3>
          {cited && !cited.source && <p>This answer cites a source it was not given.</p>}
          {cited?.source && placeOf(cited.source) && <p class="badge">{placeOf(cited.source)}</p>}
          {cited?.source?.image_url && (
            <img src={cited.source.image_url} alt={`The figure or page this passage describes, from ${cited.source.source}`} />
          )}
          {cited?.source && <blockquote>{cited.source.text}</blockquote>}
          {openUrl && (
            <a href={openUrl} target="_blank" rel="noopener noreferrer">
              Open {cited?.source?.source}
            </a>
          )}
          <button type="submit">Close</button>
        </form>
      </dialog>
    </section>
  );
}
