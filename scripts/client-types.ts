/**
 * The typed client's types, written from the service's OpenAPI document (itself made from the routes'
 * TypeBox schemas by @fastify/swagger), so the client cannot drift from the service:
 * test/client/client-types.test.ts compares packages/client/src/api-types.ts with what this writes, and
 * rewrites it with UPDATE_CLIENT_TYPES=1.
 */

/** The part of a JSON Schema (OpenAPI 3.1) the routes use. */
interface Schema {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  patternProperties?: Record<string, Schema>;
  items?: Schema;
  description?: string;
}

interface Operation {
  summary?: string;
  description?: string;
  parameters?: { in: "path" | "query" | "header"; name: string; required?: boolean; schema?: Schema; description?: string }[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: Schema }> }>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  webhooks?: Record<string, { post?: Operation }>;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function key(name: string): string {
  return IDENTIFIER.test(name) ? name : JSON.stringify(name);
}

function comment(text: string | undefined, indent: string): string {
  if (!text) return "";
  return `${indent}/** ${text.replace(/\*\//g, "*\\/").replace(/\s*\n\s*/g, " ")} */\n`;
}

/** The TypeScript type a value of `schema` has. */
export function typeOf(schema: Schema | undefined, indent = ""): string {
  if (!schema) return "unknown";
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum) return schema.enum.map((value) => JSON.stringify(value)).join(" | ");
  const union = schema.anyOf ?? schema.oneOf;
  if (union) return union.map((member) => parenthesised(typeOf(member, indent))).join(" | ");
  if (schema.allOf) return schema.allOf.map((member) => parenthesised(typeOf(member, indent))).join(" & ");
  if (Array.isArray(schema.type)) return schema.type.map((type) => typeOf({ ...schema, type }, indent)).join(" | ");
  switch (schema.type) {
    case "string":
      return "string";
    case "number":
    case "integer":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array":
      return `${parenthesised(typeOf(schema.items, indent))}[]`;
    case "object":
      return objectType(schema, indent);
    default:
      return schema.properties ? objectType(schema, indent) : "unknown";
  }
}

function parenthesised(type: string): string {
  return /[|&]/.test(type) && !type.startsWith("{") ? `(${type})` : type;
}

function objectType(schema: Schema, indent: string): string {
  const inner = `${indent}  `;
  const required = new Set(schema.required ?? []);
  const lines = Object.entries(schema.properties ?? {}).map(
    ([name, property]) => `${comment(property.description, inner)}${inner}${key(name)}${required.has(name) ? "" : "?"}: ${typeOf(property, inner)};\n`,
  );
  const extra = typeof schema.additionalProperties === "object" ? schema.additionalProperties : Object.values(schema.patternProperties ?? {})[0];
  if (extra) lines.push(`${inner}[key: string]: ${typeOf(extra, inner)};\n`);
  else if (lines.length === 0) return schema.additionalProperties === false ? "Record<string, never>" : "Record<string, unknown>";
  return `{\n${lines.join("")}${indent}}`;
}

function jsonSchemaOf(content: Record<string, { schema?: Schema }> | undefined): string | undefined {
  if (!content) return undefined;
  if (content["application/json"]) return typeOf(content["application/json"].schema, "      ");
  return "string";
}

function parametersOf(operation: Operation, where: "path" | "query" | "header", indent: string): string {
  const parameters = (operation.parameters ?? []).filter((parameter) => parameter.in === where);
  if (parameters.length === 0) return "Record<string, never>";
  const inner = `${indent}  `;
  return `{\n${parameters.map((parameter) => `${comment(parameter.description, inner)}${inner}${key(parameter.name)}${parameter.required ? "" : "?"}: ${typeOf(parameter.schema, inner)};\n`).join("")}${indent}}`;
}

/** packages/client/src/api-types.ts for this document. */
export function clientTypesOf(document: OpenApiDocument): string {
  const operations: string[] = [];
  // The refusals' envelope: the schema most error answers share (GET /ready's 503 has its own).
  const errorSchemas = new Map<string, { schema: Schema; count: number }>();
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const replies: string[] = [];
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const type = jsonSchemaOf(response.content) ?? "undefined";
        if (status.startsWith("2")) replies.push(`${comment(response.description === "Default Response" ? undefined : response.description, "      ")}      ${status}: ${type};\n`);
        else {
          const schema = response.content?.["application/json"]?.schema;
          const seen = schema && errorSchemas.get(JSON.stringify(schema));
          if (schema) errorSchemas.set(JSON.stringify(schema), { schema, count: (seen ? seen.count : 0) + 1 });
        }
      }
      const body = jsonSchemaOf(operation.requestBody?.content) ?? "undefined";
      operations.push(
        `${comment(operation.summary ?? operation.description, "  ")}  ${JSON.stringify(`${method.toUpperCase()} ${path}`)}: {\n` +
          `    params: ${parametersOf(operation, "path", "    ")};\n` +
          `    query: ${parametersOf(operation, "query", "    ")};\n` +
          `    headers: ${parametersOf(operation, "header", "    ")};\n` +
          `    body: ${body.replace(/^ {6}/gm, "    ")};\n` +
          `    replies: {\n${replies.join("")}    };\n` +
          "  };\n",
      );
    }
  }
  const errorReply = [...errorSchemas.values()].sort((a, b) => b.count - a.count)[0]?.schema;
  const events = Object.entries(document.webhooks ?? {}).map(([name, webhook]) => {
    const schema = webhook.post?.requestBody?.content?.["application/json"]?.schema;
    return `${comment(webhook.post?.description?.split(". ")[0], "  ")}  ${JSON.stringify(name)}: ${typeOf(schema, "  ")};\n`;
  });
  return (
    "// Written by scripts/client-types.ts from the service's OpenAPI document (the routes' TypeBox schemas).\n" +
    "// Do not edit: UPDATE_CLIENT_TYPES=1 npx vitest run test/client/client-types.test.ts writes it again.\n\n" +
    "/** Every route: its path parameters, query, headers, body, and its answers by status (2xx). */\n" +
    `export interface Operations {\n${operations.join("")}}\n\n` +
    "/** The answer of every refusal (4xx, 5xx). */\n" +
    `export type ErrorReply = ${typeOf(errorReply)};\n\n` +
    "/** Every webhook event the service delivers, by type. */\n" +
    `export interface WebhookEvents {\n${events.join("")}}\n`
  );
}
