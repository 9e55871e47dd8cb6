#!/usr/bin/env node
/**
 * The self-hosting wrapper, `node dist/server.js`: its command line, settings and serving are in
 * `main.ts`.
 */
import { main } from './main.ts';

void main();
