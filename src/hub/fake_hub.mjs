// A fake Hugging Face hub for the tests (never the network): serves the repos of a folder
// ROOT/<org>/<name>/<files> as the hub's HTTP API does, each at one commit (the sha1 of its id).
//   GET /api/models/ORG/NAME/revision/REV   {"sha", "siblings": [{"rfilename"}]}; REV: main or
//                                           the commit, else 404 RevisionNotFound
//   HEAD|GET /ORG/NAME/resolve/REV/PATH     small files: 307 to a relative /api/resolve-cache/
//                                           URL answering 200 with an ETag (their sha1);
//                                           .gguf/.safetensors (LFS): 302 to an absolute /cdn/
//                                           URL, X-Linked-Etag (their sha256), X-Linked-Size
//   GET /cdn/ORG/NAME/PATH                  307 to a relative /blob/ URL
//   GET /blob/ORG/NAME/PATH                 the bytes; Range: bytes=N- answers 206
//   GET /_log                               the requests before it: [{method, url, range, auth}]
// A repo holding a file `.token` is gated: without `Authorization: Bearer <its text>` every API
// and resolve request answers 401. Options (startFakeHub's, or --drop-once PATH on the command
// line): dropOnce, files whose first /blob/ GET sends half the bytes and drops the connection;
// corrupt (--corrupt PATH), files whose /blob/ bytes always come with their first byte changed
// (their X-Linked-Etag still the true sha256).
// Run as a program, it prints its port on stdout and serves until stdin closes or it is killed.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const sha = (algorithm, bytes) => createHash(algorithm).update(bytes).digest('hex');
const isLfs = (path) => /\.(gguf|safetensors)$/.test(path);

function filesUnder(dir) {
  const files = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...filesUnder(path).map((f) => `${entry.name}/${f}`));
    else if (entry.name !== '.token') files.push(entry.name);
  }
  return files.sort();
}

export function startFakeHub(root, { dropOnce = [], corrupt = [] } = {}) {
  const log = [];
  const dropped = new Set();
  const server = http.createServer((request, response) => {
    const url = decodeURIComponent(request.url.split('?')[0]);
    if (url !== '/_log') {
      log.push({ method: request.method, url, range: request.headers.range ?? null,
        auth: request.headers.authorization ?? null });
    }
    const send = (status, headers = {}, body = '') => {
      response.writeHead(status, { 'content-length': Buffer.byteLength(body), ...headers });
      response.end(request.method === 'HEAD' ? undefined : body);
    };
    const error = (status, code) =>
      send(status, { 'x-error-code': code, 'content-type': 'application/json' }, JSON.stringify({ error: code }));
    if (url === '/_log') return send(200, { 'content-type': 'application/json' }, JSON.stringify(log));
    const match = url.match(/^\/(api\/models\/|api\/resolve-cache\/models\/|cdn\/|blob\/)?([^/]+)\/([^/]+)\/(.*)$/);
    if (!match) return error(404, 'RepoNotFound');
    const [, kind, org, name, rest] = match;
    const repoDir = join(root, org, name);
    if (!existsSync(repoDir)) return error(404, 'RepoNotFound');
    const commit = sha('sha1', `${org}/${name}`);
    const tokenFile = join(repoDir, '.token');
    const gated = existsSync(tokenFile) && !['cdn/', 'blob/'].includes(kind);
    if (gated && request.headers.authorization !== `Bearer ${readFileSync(tokenFile, 'utf8').trim()}`) {
      return error(401, 'GatedRepo');
    }
    if (kind === 'api/models/') {
      const revision = rest.replace(/^revision\//, '');
      if (revision !== 'main' && revision !== commit) return error(404, 'RevisionNotFound');
      return send(200, { 'content-type': 'application/json' }, JSON.stringify({
        id: `${org}/${name}`, sha: commit, siblings: filesUnder(repoDir).map((rfilename) => ({ rfilename })) }));
    }
    const port = server.address().port;
    if (kind === 'cdn/') return send(307, { location: `/blob/${org}/${name}/${rest}` });
    if (kind === 'blob/') {
      const path = join(repoDir, rest);
      if (!existsSync(path)) return error(404, 'EntryNotFound');
      const bytes = readFileSync(path);
      const range = /^bytes=(\d+)-$/.exec(request.headers.range ?? '');
      const start = range ? Number(range[1]) : 0;
      if (start >= bytes.length && bytes.length > 0) return send(416);
      const body = Buffer.from(bytes.subarray(start));
      if (corrupt.includes(rest) && start === 0 && body.length > 0) body[0] ^= 0xff;
      response.writeHead(range ? 206 : 200, { 'content-length': body.length,
        ...(range ? { 'content-range': `bytes ${start}-${bytes.length - 1}/${bytes.length}` } : {}) });
      if (dropOnce.includes(rest) && !dropped.has(rest)) {
        dropped.add(rest);
        response.write(body.subarray(0, Math.floor(body.length / 2)), () => response.socket.destroy());
        return;
      }
      return response.end(body);
    }
    // resolve/REV/PATH
    const resolved = rest.match(kind === undefined ? /^resolve\/([^/]+)\/(.+)$/ : /^([^/]+)\/(.+)$/);
    if (!resolved) return error(404, 'EntryNotFound');
    const [, revision, file] = resolved;
    if (kind === undefined && !isLfs(file)) {
      return send(307, { location: `/api/resolve-cache/models/${org}/${name}/${revision}/${file}` });
    }
    if (revision !== 'main' && revision !== commit) return error(404, 'RevisionNotFound');
    const path = join(repoDir, file);
    if (!existsSync(path) || relative(repoDir, path).startsWith('..')) return error(404, 'EntryNotFound');
    const bytes = readFileSync(path);
    if (isLfs(file)) {
      return send(302, { location: `http://127.0.0.1:${port}/cdn/${org}/${name}/${file}`, 'x-repo-commit': commit,
        'x-linked-etag': `"${sha('sha256', bytes)}"`, 'x-linked-size': String(statSync(path).size) });
    }
    response.writeHead(200, { 'content-length': bytes.length, etag: `"${sha('sha1', bytes)}"`,
      'x-repo-commit': commit });
    return response.end(request.method === 'HEAD' ? undefined : bytes);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () =>
    resolve({ port: server.address().port, log, close: () => new Promise((done) => server.close(done)) })));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const options = { dropOnce: [], corrupt: [] };
  for (const [flag, list] of [['--drop-once', options.dropOnce], ['--corrupt', options.corrupt]]) {
    for (let i = args.indexOf(flag); i >= 0; i = args.indexOf(flag)) {
      list.push(args[i + 1]);
      args.splice(i, 2);
    }
  }
  const hub = await startFakeHub(args[0], options);
  console.log(hub.port);
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
}
