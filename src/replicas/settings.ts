/** How this replica names itself and how the others reach it (with DATABASE_URL, several replicas share one journal). */
import { Type } from "@sinclair/typebox";
import { settingsPart } from "../settings/settings-part.js";

export const REPLICA_SETTINGS = settingsPart({
  schema: {
    replicaId: Type.Optional(Type.String({ pattern: "^[A-Za-z0-9._-]{1,64}$", description: "this replica's name in /wallet, /metrics and the logs; default: host name and process id" })),
    replicaUrl: Type.Optional(Type.String({ pattern: "^https?://", description: "how the other replicas reach this one; default: http://<host name>:<port>" })),
  },
  variables: { replicaId: "REPLICA_ID", replicaUrl: "REPLICA_URL" },
  urls: { replicaUrl: "one" },
});
