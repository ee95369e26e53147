PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE bread_sessions (
  id TEXT PRIMARY KEY,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  agent_id TEXT,
  tags TEXT NOT NULL DEFAULT '{}'
);
INSERT INTO bread_sessions VALUES('session-v0',1796324270732,1796324270736,'publisher','{}');
CREATE TABLE bread_session_messages (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  session_id TEXT NOT NULL REFERENCES bread_sessions(id) ON DELETE CASCADE,
  role TEXT NOT NULL,
  content TEXT,
  timestamp INTEGER NOT NULL
);
INSERT INTO bread_session_messages VALUES(1,'01a23d45-228e-70ca-88de-9e366b3140b3','session-v0','user','{"role":"user","parts":[{"type":"text","text":"who are you?"}]}',1796324270734);
INSERT INTO bread_session_messages VALUES(2,'01a23d45-228e-7c3b-8bbc-e09b6cf375c1','session-v0','assistant','{"role":"assistant","parts":[{"type":"text","text":"Hello, I publish things."}]}',1796324270734);
INSERT INTO bread_session_messages VALUES(3,'01a23d45-2290-7260-b0c1-1dfe7bc88935','session-v0','user','{"role":"user","parts":[{"type":"text","text":"publish the v0 notes"}]}',1796324270736);
INSERT INTO bread_session_messages VALUES(4,'01a23d45-2290-76d9-b5b3-2966410f4503','session-v0','assistant','{"role":"assistant","parts":[{"type":"tool-call","toolCallId":"call-human_approve_publish","toolName":"human_approve_publish","input":{"url":"https://bread.dev/v0"}}]}',1796324270736);
CREATE TABLE bread_checkpoints (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  run_id TEXT NOT NULL,
  session_id TEXT REFERENCES bread_sessions(id) ON DELETE CASCADE,
  tool_name TEXT NOT NULL,
  tool_call_id TEXT NOT NULL,
  schema TEXT,
  prompt TEXT,
  kind TEXT,
  skill TEXT,
  parent TEXT,
  pending TEXT,
  created_at INTEGER NOT NULL,
  meta TEXT,
  claimed_by TEXT,
  claimed_until INTEGER,
  human_set TEXT
);
INSERT INTO bread_checkpoints VALUES('01a23d45-2290-76a6-9fcc-c95451a6d7b2','publisher','01a23d45-228f-76cb-8b7e-68d8cd69a5bb','session-v0','human_approve_publish','call-human_approve_publish','{"url":"https://bread.dev/v0"}','May I publish?','input',NULL,NULL,NULL,1796324270736,NULL,NULL,NULL,NULL);
CREATE TABLE bread_runs (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  session_id TEXT REFERENCES bread_sessions(id) ON DELETE CASCADE,
  pipeline_id TEXT,
  started_by TEXT,
  status TEXT NOT NULL,
  owner TEXT,
  lease_until INTEGER,
  checkpoint_id TEXT,
  attempt INTEGER,
  error_code TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
INSERT INTO bread_runs VALUES('01a23d45-228b-7a5a-8fe0-86c6c06ba442','publisher','session-v0',NULL,NULL,'completed',NULL,NULL,NULL,NULL,NULL,1796324270732,1796324270734);
INSERT INTO bread_runs VALUES('01a23d45-228f-76cb-8b7e-68d8cd69a5bb','publisher','session-v0',NULL,NULL,'suspended',NULL,NULL,'01a23d45-2290-76a6-9fcc-c95451a6d7b2',NULL,NULL,1796324270735,1796324270737);
CREATE TABLE bread_joins (
  id TEXT PRIMARY KEY,
  slots INTEGER NOT NULL,
  settled TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  completed_by INTEGER
);
INSERT INTO bread_joins VALUES('join-v0',2,'10',1796324270738,NULL);
CREATE TABLE bread_join_outputs (
  join_id TEXT NOT NULL REFERENCES bread_joins(id) ON DELETE CASCADE,
  slot INTEGER NOT NULL,
  output TEXT,
  PRIMARY KEY (join_id, slot)
);
INSERT INTO bread_join_outputs VALUES('join-v0',0,'"first"');
CREATE TABLE bread_loops (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  run_id TEXT NOT NULL,
  pool TEXT NOT NULL,
  pipeline TEXT NOT NULL,
  max_iterations INTEGER NOT NULL,
  status TEXT NOT NULL,
  iterations INTEGER NOT NULL DEFAULT 0,
  result TEXT,
  started_at INTEGER NOT NULL,
  completed_at INTEGER
);
INSERT INTO bread_loops VALUES('loop-v0','publisher','session-v0','run-loop-v0','["drafter","critic"]','["drafter","critic"]',3,'running',0,NULL,1700000000000,NULL);
CREATE TABLE bread_loop_iterations (
  id TEXT PRIMARY KEY,
  loop_id TEXT NOT NULL REFERENCES bread_loops(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  input TEXT,
  output TEXT,
  started_at INTEGER NOT NULL,
  completed_at INTEGER NOT NULL
);
INSERT INTO bread_loop_iterations VALUES('iteration-v0','loop-v0',1,'{"draft": 1}','{"critique":"more"}',1700000000001,1700000000002);
CREATE TABLE bread_crumbs (
  run_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  session_id TEXT REFERENCES bread_sessions(id) ON DELETE CASCADE,
  agent_id TEXT,
  type TEXT NOT NULL,
  crumb TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, seq)
);
INSERT INTO bread_crumbs VALUES('01a23d45-228b-7a5a-8fe0-86c6c06ba442',1,'session-v0','publisher','agent:run:start','{"type":"agent:run:start","agentId":"publisher","runId":"01a23d45-228b-7a5a-8fe0-86c6c06ba442","sessionId":"session-v0","timestamp":1796324270733,"seq":1,"input":"who are you?"}',1796324270733);
INSERT INTO bread_crumbs VALUES('01a23d45-228b-7a5a-8fe0-86c6c06ba442',2,'session-v0','publisher','text:delta','{"type":"text:delta","agentId":"publisher","runId":"01a23d45-228b-7a5a-8fe0-86c6c06ba442","sessionId":"session-v0","timestamp":1796324270734,"seq":2,"delta":"Hello, I publish things."}',1796324270735);
INSERT INTO bread_crumbs VALUES('01a23d45-228b-7a5a-8fe0-86c6c06ba442',3,'session-v0','publisher','agent:run:end','{"type":"agent:run:end","agentId":"publisher","runId":"01a23d45-228b-7a5a-8fe0-86c6c06ba442","sessionId":"session-v0","timestamp":1796324270735,"seq":3,"output":"Hello, I publish things.","durationMs":1}',1796324270735);
INSERT INTO bread_crumbs VALUES('01a23d45-228f-76cb-8b7e-68d8cd69a5bb',1,'session-v0','publisher','agent:run:start','{"type":"agent:run:start","agentId":"publisher","runId":"01a23d45-228f-76cb-8b7e-68d8cd69a5bb","sessionId":"session-v0","timestamp":1796324270736,"seq":1,"input":"publish the v0 notes"}',1796324270736);
INSERT INTO bread_crumbs VALUES('01a23d45-228f-76cb-8b7e-68d8cd69a5bb',2,'session-v0','publisher','human:required','{"type":"human:required","agentId":"publisher","runId":"01a23d45-228f-76cb-8b7e-68d8cd69a5bb","sessionId":"session-v0","timestamp":1796324270737,"seq":2,"checkpointId":"01a23d45-2290-76a6-9fcc-c95451a6d7b2","toolName":"human_approve_publish","schema":{"url":"https://bread.dev/v0"},"prompt":"May I publish?","kind":"input"}',1796324270737);
CREATE TABLE bread_task_runs (
  id TEXT PRIMARY KEY,
  task_id TEXT NOT NULL,
  agent_id TEXT,
  session_id TEXT,
  run_id TEXT,
  model TEXT NOT NULL,
  input TEXT,
  output TEXT,
  status TEXT NOT NULL,
  usage TEXT,
  error TEXT,
  duration_ms INTEGER,
  created_at INTEGER NOT NULL,
  completed_at INTEGER
);
INSERT INTO bread_task_runs VALUES('task-run-v0','summarise','publisher','session-v0',NULL,'{"provider":"mock","model":"m"}','{"text":"v0"}',NULL,'running',NULL,NULL,NULL,1700000000003,NULL);
CREATE TABLE bread_kg_nodes (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  session_id TEXT,
  label TEXT NOT NULL,
  data TEXT NOT NULL DEFAULT '{}',
  created_at INTEGER NOT NULL
);
INSERT INTO bread_kg_nodes VALUES('01a23d45-2293-7820-8b36-552155e6d5ea','publisher','session-v0','bread','{"kind":"food"}',1796324270739);
INSERT INTO bread_kg_nodes VALUES('01a23d45-2293-7b53-b1b1-79908691b009','publisher',NULL,'flour','{}',1796324270739);
CREATE TABLE bread_kg_edges (
  id TEXT PRIMARY KEY,
  from_id TEXT NOT NULL REFERENCES bread_kg_nodes(id) ON DELETE CASCADE,
  to_id TEXT NOT NULL REFERENCES bread_kg_nodes(id) ON DELETE CASCADE,
  relation TEXT NOT NULL
);
INSERT INTO bread_kg_edges VALUES('01a23d45-2293-7eca-a084-54a6036017ff','01a23d45-2293-7820-8b36-552155e6d5ea','01a23d45-2293-7b53-b1b1-79908691b009','made_of');
CREATE TABLE bread_documents (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  title TEXT NOT NULL,
  content TEXT NOT NULL,
  source TEXT,
  created_at INTEGER NOT NULL
);
INSERT INTO bread_documents VALUES('01a23d45-2294-72ab-9b0c-b4d3d412eec8','publisher','Release notes v0','The first release.','notes.md',1796324270740);
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('bread_session_messages',4);
CREATE INDEX idx_bread_sessions_updated ON bread_sessions(updated_at);
CREATE INDEX idx_bread_session_messages_session ON bread_session_messages(session_id, seq);
CREATE INDEX idx_bread_checkpoints_session ON bread_checkpoints(session_id);
CREATE INDEX idx_bread_checkpoints_created ON bread_checkpoints(created_at);
CREATE INDEX idx_bread_runs_session ON bread_runs(session_id);
CREATE INDEX idx_bread_runs_lease ON bread_runs(status, lease_until);
CREATE INDEX idx_bread_runs_owner ON bread_runs(owner, status);
CREATE INDEX idx_bread_loops_session ON bread_loops(session_id);
CREATE INDEX idx_bread_loops_agent ON bread_loops(agent_id);
CREATE INDEX idx_bread_loop_iterations_loop ON bread_loop_iterations(loop_id, idx);
CREATE INDEX idx_bread_crumbs_session ON bread_crumbs(session_id);
CREATE INDEX idx_bread_task_runs_task ON bread_task_runs(task_id);
CREATE INDEX idx_bread_task_runs_session ON bread_task_runs(session_id);
CREATE INDEX idx_bread_task_runs_agent ON bread_task_runs(agent_id);
CREATE INDEX idx_bread_kg_nodes_agent ON bread_kg_nodes(agent_id, session_id);
CREATE INDEX idx_bread_kg_edges_from ON bread_kg_edges(from_id);
CREATE INDEX idx_bread_kg_edges_to ON bread_kg_edges(to_id);
CREATE INDEX idx_bread_documents_agent ON bread_documents(agent_id);
COMMIT;
