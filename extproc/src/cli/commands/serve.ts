// `steadfast serve`: the control service in attach mode (ext_proc over gRPC + admin API).
import type { Command } from '../command.js';

export const serveCommand: Command = {
  name: 'serve',
  summary: 'run the control service for an existing Envoy (ext_proc + admin API)',
  usage: 'steadfast serve [--grpc-address HOST:PORT] [--admin-port N]',
  async run(_args, io) {
    io.err('not implemented yet');
    return 2;
  },
};
