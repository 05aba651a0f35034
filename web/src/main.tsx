import { render } from 'preact';
import { App } from './App.tsx';
import { startAuth } from './session.ts';
import { startTheme } from './theme.ts';
import './styles.css';

startTheme();
const root = document.getElementById('app') as HTMLElement;
startAuth().then(
  () => render(<App />, root),
  (error: Error) => {
    root.textContent = error.message;
  },
);
