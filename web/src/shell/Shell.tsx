import { useQueryClient } from '@tanstack/preact-query';
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { auth } from '../session.ts';
import { chooseTheme, type ThemeChoice, themeChoice } from '../theme.ts';
import { placeOf, Sidebar } from './Sidebar.tsx';
import { useShortcuts } from './shortcuts.ts';

function ThemeSwitch() {
  const [choice, setChoice] = useState<ThemeChoice>(themeChoice);
  return (
    <label class="theme-switch">
      <span class="visually-hidden">Colour theme</span>
      <select
        value={choice}
        onChange={(event) => {
          const next = event.currentTarget.value as ThemeChoice;
          chooseTheme(next);
          setChoice(next);
        }}
      >
        <option value="system">Auto</option>
        <option value="light">Light</option>
        <option value="dark">Dark</option>
      </select>
    </label>
  );
}

/**
 * Every signed-in page: a top bar, the sidebar of collections and chats, and the page in the main pane. Under
 * 48rem the sidebar is a drawer the menu button opens; choosing a place, Esc or the scrim closes it.
 */
export function Shell({ email, children }: { email: string; children: ComponentChildren }) {
  const { path, route } = useLocation();
  const queries = useQueryClient();
  const place = placeOf(path);
  const [drawer, setDrawer] = useState(false);
  const menu = useRef<HTMLButtonElement>(null);
  const side = useRef<HTMLElement>(null);

  // A new place closes the drawer; its links are how one leaves it.
  useEffect(() => setDrawer(false), [path]);
  useEffect(() => {
    if (!drawer) return;
    side.current?.querySelector<HTMLElement>('a, button')?.focus();
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== 'Escape') return;
      setDrawer(false);
      menu.current?.focus();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [drawer]);

  const newChat = useCallback(
    () => route(place.collectionId ? `/app/c/${place.collectionId}` : place.personal ? '/app/personal' : '/app/'),
    [route, place.collectionId, place.personal],
  );
  useShortcuts(newChat);

  return (
    <div class={`shell${drawer ? ' drawer-open' : ''}`}>
      <a class="skip" href="#main">
        Skip to the page
      </a>
      <header class="bar">
        <button
          ref={menu}
          type="button"
          class="icon menu"
          aria-expanded={drawer}
          aria-controls="sidebar"
          aria-label="Collections and chats"
          onClick={() => setDrawer(!drawer)}
        >
          ☰
        </button>
        <a href="/app/" class="brand">
          RAG service
        </a>
        <span class="grow" />
        <ThemeSwitch />
        <span class="who">{email}</span>
        <button
          type="button"
          class="secondary"
          onClick={async () => {
            await auth().signOut();
            queries.clear();
            route('/login', true);
          }}
        >
          Sign out
        </button>
      </header>
      <nav id="sidebar" ref={side} class="sidebar" aria-label="Collections and chats">
        <Sidebar place={place} />
      </nav>
      {drawer && <div class="scrim" aria-hidden="true" onClick={() => setDrawer(false)} />}
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}
