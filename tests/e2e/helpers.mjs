// Shared helpers of the end-to-end tests: the server's address, an OpenAI client, raw HTTP.
import http from 'node:http';
import OpenAI from 'openai';

export const port = Number(process.env.VLLM_E2E_PORT);
export const baseURL = `http://127.0.0.1:${port}/v1`;
export const apiKey = 'e2e-key';
export const model = 'stories';

export function client(options = {}) {
  return new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 60000, ...options });
}

// One HTTP request with full control over the bytes; resolves {status, headers, body}.
export function rawRequest({ method = 'POST', path, headers = {}, body = '' }) {
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: '127.0.0.1', port, method, path, headers: { 'content-length': Buffer.byteLength(body), ...headers } },
      (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks).toString() }));
      });
    request.on('error', reject);
    request.end(body);
  });
}

export async function postJson(path, body, headers = {}) {
  const response = await rawRequest({
    path,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, ...headers },
  });
  return { ...response, json: response.body ? JSON.parse(response.body) : null };
}

// The value of an unlabelled-but-for-model_name Prometheus sample.
export async function metric(name) {
  const response = await rawRequest({ method: 'GET', path: '/metrics' });
  const line = response.body.split('\n').find((l) => l.startsWith(name + '{'));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
