import { render } from 'preact';
import { App } from './App.tsx';
import { startAuth } from './session.ts';
import './styles.css';

const root = document.getElementById('app') as HTMLElement;
startAuth().then(
  () => render(<App />, root),
  (error: Error) => {
    root.textContent = error.message;
  },
);
