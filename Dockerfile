# syntax=docker/dockerfile:1

# Production dependencies, with the tools to build better-sqlite3 should no prebuilt binary fit.
FROM node:24-bookworm-slim AS deps
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund

# Build: compile TypeScript to dist/.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=optional --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json tsconfig.console.json ./
COPY contracts/artifacts ./contracts/artifacts
COPY src ./src
RUN npm run build

# Runtime: production dependencies and the compiled code only, as the unprivileged node user.
FROM node:24-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 JOURNAL_PATH=/app/data/transfers.sqlite
WORKDIR /app
COPY package.json package-lock.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The transfer journal: mount a volume here, and back it up.
RUN mkdir -p /app/data && chown node:node /app/data
VOLUME ["/app/data"]
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node runs directly (no npm, no shell), so SIGTERM from `docker stop` reaches the service.
CMD ["node", "dist/src/server.js"]
