import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import type { QueryRequest } from '../../../client/index.ts';
import { ask, call, messageOf, rag } from '../api.ts';
import { chatTitle, useCollections, useSessions } from '../collections.ts';
import { Failure } from '../Failure.tsx';
import { STOP_EVENT } from '../shell/shortcuts.ts';
import { SourcePanel } from '../source/SourcePanel.tsx';
import { AskBox, askingOf, type Choices, NO_CHOICES } from './AskBox.tsx';
import { ChatActions } from './ChatActions.tsx';
import { Message, type Shown } from './Message.tsx';
import { handOver, takeOver } from './pending.ts';

interface Props {
  /** The chat's collection; null on the start page and in the personal space. */
  collectionId: string | null;
  sessionId: string | null;
  /** The personal space: its questions are not kept as chats. */
  personal: boolean;
}

let nextKey = 0;
const key = () => `local-${nextKey++}`;

/** A chat: its messages, the ask box, and the source panel of the answer whose citation was opened. */
export function ChatPage({ collectionId, sessionId, personal }: Props) {
  const { route } = useLocation();
  const queries = useQueryClient();
  const collections = useCollections();
  const [handed] = useState(() => takeOver(sessionId));
  const [chosen, setChosen] = useState<string[]>(handed?.body.collection_ids ?? (collectionId ? [collectionId] : []));
  const [choices, setChoices] = useState<Choices>(handed?.choices ?? NO_CHOICES);
  const [messages, setMessages] = useState<Shown[]>([]);
  const [streaming, setStreaming] = useState(false);
  const [failure, setFailure] = useState<unknown>(null);
  const [cited, setCited] = useState<{ message: number; n: number } | null>(null);
  const stopper = useRef<AbortController | null>(null);
  const lastBody = useRef<QueryRequest | null>(null);

  const session = useQuery({
    queryKey: ['session', collectionId, sessionId],
    enabled: collectionId !== null && sessionId !== null,
    queryFn: () =>
      call(
        rag.GET('/chat/{collection_id}/sessions/{session_id}', {
          params: { path: { collection_id: collectionId as string, session_id: sessionId as string } },
        }),
      ),
  });
  const sessions = useSessions(collectionId ?? '', collectionId !== null && sessionId !== null);
  const title = sessionId ? chatTitle(sessions.data?.find((s) => s.id === sessionId) ?? { title: null }) : 'New chat';

  // The start page asks in the first collection, if there is one; the reader can choose others, or none.
  useEffect(() => {
    if (!collectionId && !personal && collections.data?.[0])
      setChosen((now) => (now.length ? now : [collections.data[0]?.id as string]));
  }, [collectionId, personal, collections.data]);

  // The history as the API has it, until this page asks: from then on what it asks is added as it streams, and a
  // refetch must not wipe a live answer.
  const asked = useRef(false);
  useEffect(() => {
    if (!session.data || asked.current) return;
    const history: Shown[] = session.data.map((m) => ({
      key: m.id,
      role: m.role,
      content: m.content,
      sources: m.sources,
      evaluationId: m.evaluation_id,
      feedback: m.feedback,
    }));
    setMessages(history);
    // The collections its last question searched, so a follow-up searches them too.
    const last = session.data.findLast((m) => m.role === 'user');
    if (last && last.collection_ids.length > 0) setChosen(last.collection_ids);
  }, [session.data]);

  useEffect(() => {
    if (handed) void stream(handed.body);
    const stop = () => stopper.current?.abort();
    document.addEventListener(STOP_EVENT, stop);
    return () => {
      document.removeEventListener(STOP_EVENT, stop);
      stop();
    };
  }, []);

  const setLast = (change: (last: Shown) => Shown) =>
    setMessages((all) => {
      const last = all[all.length - 1];
      return last ? [...all.slice(0, -1), change(last)] : all;
    });

  async function stream(body: QueryRequest, replaceLast = false) {
    asked.current = true;
    setFailure(null);
    lastBody.current = body;
    const controller = new AbortController();
    stopper.current = controller;
    setStreaming(true);
    const answer: Shown = {
      key: key(),
      role: 'assistant',
      content: '',
      sources: [],
      evaluationId: null,
      feedback: null,
      note: 'Searching…',
      streaming: true,
    };
    setMessages((all) =>
      replaceLast
        ? [...all.slice(0, -1), answer]
        : [...all, { key: key(), role: 'user', content: body.question, sources: [], evaluationId: null, feedback: null }, answer],
    );
    try {
      for await (const event of ask(body, controller.signal)) {
        if (event.event === 'metadata') setLast((last) => ({ ...last, sources: event.data.sources, note: 'Answering…' }));
        else if (event.event === 'token')
          setLast((last) => ({ ...last, content: last.content + event.data.token, note: undefined }));
        else if (event.event === 'done')
          setLast((last) => ({ ...last, evaluationId: event.data.evaluation_id, note: undefined }));
        else setLast((last) => ({ ...last, note: `The answer could not be finished: ${event.data.message}.` }));
      }
    } catch (error) {
      setLast((last) => ({ ...last, note: controller.signal.aborted ? 'Stopped.' : `Not answered: ${messageOf(error)}` }));
    } finally {
      setLast((last) => ({ ...last, streaming: false }));
      setStreaming(false);
      stopper.current = null;
      // The chat's title (named after its first question) in the sidebar, and its history for the next visit.
      if (collectionId) void queries.invalidateQueries({ queryKey: ['sessions', collectionId] });
      if (sessionId) void queries.invalidateQueries({ queryKey: ['session', collectionId, sessionId] });
    }
  }

  /** A question as this page would ask it now: where, with the advanced choices, in this chat. */
  function bodyFor(question: string): QueryRequest {
    const where: Partial<QueryRequest> =
      chosen.length > 1 ? { collection_ids: chosen } : chosen.length === 1 ? { collection_id: chosen[0] } : {};
    return { question, ...where, ...askingOf(choices), ...(sessionId ? { session_id: sessionId } : {}) };
  }

  async function onAsk(question: string) {
    const body = bodyFor(question);
    const home = chosen[0];
    if (sessionId || !home) return stream(body);
    // A first question in a collection makes its chat, and continues at the chat's own address.
    try {
      const made = await call(
        rag.POST('/chat/{collection_id}/sessions', { params: { path: { collection_id: home } }, body: {} }),
      );
      handOver({ sessionId: made.id, body: { ...body, session_id: made.id }, choices });
      void queries.invalidateQueries({ queryKey: ['sessions', home] });
      route(`/app/c/${home}/chat/${made.id}`);
    } catch (error) {
      setFailure(error);
    }
  }

  const lastAnswer = messages.findLastIndex((m) => m.role === 'assistant');
  // The last answer asked again: as it was asked on this page, or, from the history, its question asked now.
  const lastQuestion = messages[lastAnswer - 1];
  const again = lastBody.current ?? (lastQuestion?.role === 'user' ? bodyFor(lastQuestion.content) : null);
  const open = cited ? messages[cited.message] : undefined;

  return (
    <div class={`chat${open ? ' with-source' : ''}`}>
      <section class="conversation stack" aria-labelledby="chat-title">
        <h1 id="chat-title">{personal ? 'Personal space' : title}</h1>
        {collectionId && sessionId && <ChatActions collectionId={collectionId} sessionId={sessionId} title={title} />}
        {messages.length === 0 && !session.isLoading && (
          <p class="hint">
            {personal
              ? 'Ask about your own documents, outside any collection. Questions here are not kept as chats.'
              : 'Ask a question: the answer cites the passages it uses, and each citation opens its document at the passage.'}
          </p>
        )}
        <Failure error={session.error} />
        <ol class="plain stack messages" aria-label="Messages" aria-live="polite">
          {messages.map((message, i) => (
            <Message
              key={message.key}
              message={message}
              onCite={(n) => setCited({ message: i, n })}
              onRegenerate={i === lastAnswer && !streaming && again ? () => void stream(again, true) : undefined}
            />
          ))}
        </ol>
        <Failure error={failure} />
        <AskBox
          collections={collections.data ?? []}
          chosen={personal ? [] : chosen}
          locked={personal ? null : collectionId}
          onChoose={(next) => (personal ? route(next[0] ? `/app/c/${next[0]}` : '/app/personal') : setChosen(next))}
          streaming={streaming}
          choices={choices}
          onChoices={setChoices}
          onAsk={(question) => void onAsk(question)}
          onStop={() => stopper.current?.abort()}
        />
      </section>
      {open && cited && (
        <SourcePanel
          sources={open.sources}
          active={cited.n}
          onChoose={(n) => setCited({ ...cited, n })}
          onClose={() => setCited(null)}
          fallbackCollection={collectionId}
        />
      )}
    </div>
  );
}
