# syntax=docker/dockerfile:1

# Build: compile TypeScript to dist/.
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=optional --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY contracts/artifacts ./contracts/artifacts
COPY src ./src
RUN npm run build

# Runtime: production dependencies and the compiled code only, as the unprivileged node user.
FROM node:22-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
USER node
EXPOSE 3000
# node itself is PID 1's child-free main process, so SIGTERM from `docker stop` reaches the service.
CMD ["node", "dist/src/server.js"]
