// Every subcommand, in the order `steadfast help` lists them. Add one line per command.
import type { Command } from '../command.js';
import { devCommand } from './dev.js';
import { envoyConfigCommand } from './envoy-config.js';
import { quickstartCommand } from './quickstart.js';
import { resolveCommand } from './resolve.js';
import { serveCommand } from './serve.js';
import { validateCommand } from './validate.js';

export const commands: readonly Command[] = [
  quickstartCommand,
  devCommand,
  envoyConfigCommand,
  serveCommand,
  validateCommand,
  resolveCommand,
];
