// Every subcommand, in the order `steadfast help` lists them, each module loaded only when its
// command runs: one command's start does not read another's modules (serve's does not read dev's
// local gateway or quickstart's backends). Add one entry per command.
import type { CommandEntry } from '../command.js';

export const commands: readonly CommandEntry[] = [
  {
    name: 'quickstart',
    summary: 'start the demo backends and a local gateway for examples/quickstart (what `npm start` runs)',
    load: async () => (await import('./quickstart.js')).quickstartCommand,
  },
  {
    name: 'dev',
    summary: 'run a local gateway (Envoy + control service) from Gateway API YAML, reloading on change',
    load: async () => (await import('./dev.js')).devCommand,
  },
  {
    name: 'envoy-config',
    summary: 'print the Envoy configuration for gateway mode, or the snippet for attach mode',
    load: async () => (await import('./envoy-config.js')).envoyConfigCommand,
  },
  {
    name: 'serve',
    summary: 'run the control service for an existing Envoy (ext_proc + admin API)',
    load: async () => (await import('./serve.js')).serveCommand,
  },
  {
    name: 'validate',
    summary: 'validate Gateway API YAML and show the status each object would get',
    load: async () => (await import('./validate.js')).validateCommand,
  },
  {
    name: 'resolve',
    summary: 'show which route rule a request matches and the policy it gets',
    load: async () => (await import('./resolve.js')).resolveCommand,
  },
];
