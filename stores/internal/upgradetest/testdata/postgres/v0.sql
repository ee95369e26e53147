CREATE TABLE bread_checkpoints (
    id text NOT NULL,
    agent_id text NOT NULL,
    run_id text NOT NULL,
    session_id text,
    tool_name text NOT NULL,
    tool_call_id text NOT NULL,
    schema json,
    prompt text,
    kind text,
    skill text,
    parent json,
    pending json,
    created_at bigint NOT NULL,
    meta json,
    claimed_by text,
    claimed_until bigint,
    human_set json,
    pos bigint NOT NULL
);
ALTER TABLE bread_checkpoints ALTER COLUMN pos ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME bread_checkpoints_pos_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
CREATE TABLE bread_crumbs (
    run_id text NOT NULL,
    seq bigint NOT NULL,
    session_id text,
    agent_id text,
    type text NOT NULL,
    crumb json NOT NULL,
    created_at bigint NOT NULL
);
CREATE TABLE bread_documents (
    id text NOT NULL,
    agent_id text NOT NULL,
    title text NOT NULL,
    content text NOT NULL,
    source text,
    created_at bigint NOT NULL,
    pos bigint NOT NULL
);
ALTER TABLE bread_documents ALTER COLUMN pos ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME bread_documents_pos_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
CREATE TABLE bread_join_outputs (
    join_id text NOT NULL,
    slot bigint NOT NULL,
    output json
);
CREATE TABLE bread_joins (
    id text NOT NULL,
    slots bigint NOT NULL,
    settled text NOT NULL,
    created_at bigint NOT NULL,
    completed_by bigint
);
CREATE TABLE bread_kg_edges (
    id text NOT NULL,
    from_id text NOT NULL,
    to_id text NOT NULL,
    relation text NOT NULL
);
CREATE TABLE bread_kg_nodes (
    id text NOT NULL,
    agent_id text NOT NULL,
    session_id text,
    label text NOT NULL,
    data json DEFAULT '{}'::json NOT NULL,
    created_at bigint NOT NULL,
    pos bigint NOT NULL
);
ALTER TABLE bread_kg_nodes ALTER COLUMN pos ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME bread_kg_nodes_pos_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
CREATE TABLE bread_loop_iterations (
    id text NOT NULL,
    loop_id text NOT NULL,
    idx integer NOT NULL,
    input json,
    output json,
    started_at bigint NOT NULL,
    completed_at bigint NOT NULL,
    pos bigint NOT NULL
);
ALTER TABLE bread_loop_iterations ALTER COLUMN pos ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME bread_loop_iterations_pos_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
CREATE TABLE bread_loops (
    id text NOT NULL,
    agent_id text NOT NULL,
    session_id text NOT NULL,
    run_id text NOT NULL,
    pool json NOT NULL,
    pipeline json NOT NULL,
    max_iterations integer NOT NULL,
    status text NOT NULL,
    iterations integer DEFAULT 0 NOT NULL,
    result json,
    started_at bigint NOT NULL,
    completed_at bigint,
    pos bigint NOT NULL
);
ALTER TABLE bread_loops ALTER COLUMN pos ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME bread_loops_pos_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
CREATE TABLE bread_runs (
    id text NOT NULL,
    agent_id text NOT NULL,
    session_id text,
    pipeline_id text,
    started_by text,
    status text NOT NULL,
    owner text,
    lease_until bigint,
    checkpoint_id text,
    attempt bigint,
    error_code text,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL
);
CREATE TABLE bread_session_messages (
    seq bigint NOT NULL,
    id text NOT NULL,
    session_id text NOT NULL,
    role text NOT NULL,
    content json,
    "timestamp" bigint NOT NULL
);
ALTER TABLE bread_session_messages ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME bread_session_messages_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
CREATE TABLE bread_sessions (
    id text NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    agent_id text,
    tags jsonb DEFAULT '{}'::jsonb NOT NULL,
    pos bigint NOT NULL
);
ALTER TABLE bread_sessions ALTER COLUMN pos ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME bread_sessions_pos_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
CREATE TABLE bread_task_runs (
    id text NOT NULL,
    task_id text NOT NULL,
    agent_id text,
    session_id text,
    run_id text,
    model json NOT NULL,
    input json,
    output json,
    status text NOT NULL,
    usage json,
    error text,
    duration_ms bigint,
    created_at bigint NOT NULL,
    completed_at bigint,
    pos bigint NOT NULL
);
ALTER TABLE bread_task_runs ALTER COLUMN pos ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME bread_task_runs_pos_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
INSERT INTO bread_checkpoints OVERRIDING SYSTEM VALUE VALUES ('01a23d45-25f6-77c5-b5ba-a7f39b860b79', 'publisher', '01a23d45-25c1-78d9-a152-3c31b1619f13', 'session-v0', 'human_approve_publish', 'call-human_approve_publish', '{"url":"https://bread.dev/v0"}', 'May I publish?', 'input', NULL, NULL, NULL, 1796324271606, NULL, NULL, NULL, NULL, 1);
INSERT INTO bread_crumbs VALUES ('01a23d45-254b-7bb0-aedb-84f561f4978b', 1, 'session-v0', 'publisher', 'agent:run:start', '{"type":"agent:run:start","agentId":"publisher","runId":"01a23d45-254b-7bb0-aedb-84f561f4978b","sessionId":"session-v0","timestamp":1796324271479,"seq":1,"input":"who are you?"}', 1796324271479);
INSERT INTO bread_crumbs VALUES ('01a23d45-254b-7bb0-aedb-84f561f4978b', 2, 'session-v0', 'publisher', 'text:delta', '{"type":"text:delta","agentId":"publisher","runId":"01a23d45-254b-7bb0-aedb-84f561f4978b","sessionId":"session-v0","timestamp":1796324271508,"seq":2,"delta":"Hello, I publish things."}', 1796324271542);
INSERT INTO bread_crumbs VALUES ('01a23d45-254b-7bb0-aedb-84f561f4978b', 3, 'session-v0', 'publisher', 'agent:run:end', '{"type":"agent:run:end","agentId":"publisher","runId":"01a23d45-254b-7bb0-aedb-84f561f4978b","sessionId":"session-v0","timestamp":1796324271542,"seq":3,"output":"Hello, I publish things.","durationMs":62}', 1796324271542);
INSERT INTO bread_crumbs VALUES ('01a23d45-25c1-78d9-a152-3c31b1619f13', 1, 'session-v0', 'publisher', 'agent:run:start', '{"type":"agent:run:start","agentId":"publisher","runId":"01a23d45-25c1-78d9-a152-3c31b1619f13","sessionId":"session-v0","timestamp":1796324271567,"seq":1,"input":"publish the v0 notes"}', 1796324271567);
INSERT INTO bread_crumbs VALUES ('01a23d45-25c1-78d9-a152-3c31b1619f13', 2, 'session-v0', 'publisher', 'human:required', '{"type":"human:required","agentId":"publisher","runId":"01a23d45-25c1-78d9-a152-3c31b1619f13","sessionId":"session-v0","timestamp":1796324271672,"seq":2,"checkpointId":"01a23d45-25f6-77c5-b5ba-a7f39b860b79","toolName":"human_approve_publish","schema":{"url":"https://bread.dev/v0"},"prompt":"May I publish?","kind":"input"}', 1796324271672);
INSERT INTO bread_documents OVERRIDING SYSTEM VALUE VALUES ('01a23d45-26c8-744f-8565-d3a85e2f89c8', 'publisher', 'Release notes v0', 'The first release.', 'notes.md', 1796324271816, 1);
INSERT INTO bread_join_outputs VALUES ('join-v0', 0, '"first"');
INSERT INTO bread_joins VALUES ('join-v0', 2, '10', 1796324271740, NULL);
INSERT INTO bread_kg_edges VALUES ('01a23d45-26bc-7284-9aa4-b5572e2d9e1a', '01a23d45-269e-7962-8eef-8bc4e1d303c0', '01a23d45-26af-7325-a572-8294b879d21e', 'made_of');
INSERT INTO bread_kg_nodes OVERRIDING SYSTEM VALUE VALUES ('01a23d45-269e-7962-8eef-8bc4e1d303c0', 'publisher', 'session-v0', 'bread', '{"kind":"food"}', 1796324271774, 1);
INSERT INTO bread_kg_nodes OVERRIDING SYSTEM VALUE VALUES ('01a23d45-26af-7325-a572-8294b879d21e', 'publisher', NULL, 'flour', '{}', 1796324271791, 2);
INSERT INTO bread_loop_iterations OVERRIDING SYSTEM VALUE VALUES ('iteration-v0', 'loop-v0', 1, '{"draft": 1}', '{"critique":"more"}', 1700000000001, 1700000000002, 1);
INSERT INTO bread_loops OVERRIDING SYSTEM VALUE VALUES ('loop-v0', 'publisher', 'session-v0', 'run-loop-v0', '["drafter","critic"]', '["drafter","critic"]', 3, 'running', 0, NULL, 1700000000000, NULL, 1);
INSERT INTO bread_runs VALUES ('01a23d45-254b-7bb0-aedb-84f561f4978b', 'publisher', 'session-v0', NULL, NULL, 'completed', NULL, NULL, NULL, NULL, NULL, 1796324271469, 1796324271524);
INSERT INTO bread_runs VALUES ('01a23d45-25c1-78d9-a152-3c31b1619f13', 'publisher', 'session-v0', NULL, NULL, 'suspended', NULL, NULL, '01a23d45-25f6-77c5-b5ba-a7f39b860b79', NULL, NULL, 1796324271554, 1796324271662);
INSERT INTO bread_session_messages OVERRIDING SYSTEM VALUE VALUES (1, '01a23d45-2577-7588-b0be-556bd2e4eb45', 'session-v0', 'user', '{"role":"user","parts":[{"type":"text","text":"who are you?"}]}', 1796324271479);
INSERT INTO bread_session_messages OVERRIDING SYSTEM VALUE VALUES (2, '01a23d45-2595-7053-a087-4d05302ace49', 'session-v0', 'assistant', '{"role":"assistant","parts":[{"type":"text","text":"Hello, I publish things."}]}', 1796324271509);
INSERT INTO bread_session_messages OVERRIDING SYSTEM VALUE VALUES (3, '01a23d45-25cf-7ba6-9d1f-813dcdc9d063', 'session-v0', 'user', '{"role":"user","parts":[{"type":"text","text":"publish the v0 notes"}]}', 1796324271567);
INSERT INTO bread_session_messages OVERRIDING SYSTEM VALUE VALUES (4, '01a23d45-25f6-782e-8f51-28255682fc4a', 'session-v0', 'assistant', '{"role":"assistant","parts":[{"type":"tool-call","toolCallId":"call-human_approve_publish","toolName":"human_approve_publish","input":{"url":"https://bread.dev/v0"}}]}', 1796324271606);
INSERT INTO bread_sessions OVERRIDING SYSTEM VALUE VALUES ('session-v0', 1796324271452, 1796324271622, 'publisher', '{}', 1);
INSERT INTO bread_task_runs OVERRIDING SYSTEM VALUE VALUES ('task-run-v0', 'summarise', 'publisher', 'session-v0', NULL, '{"provider":"mock","model":"m"}', '{"text":"v0"}', NULL, 'running', NULL, NULL, NULL, 1700000000003, NULL, 1);
SELECT pg_catalog.setval('bread_checkpoints_pos_seq', 1, true);
SELECT pg_catalog.setval('bread_documents_pos_seq', 1, true);
SELECT pg_catalog.setval('bread_kg_nodes_pos_seq', 2, true);
SELECT pg_catalog.setval('bread_loop_iterations_pos_seq', 1, true);
SELECT pg_catalog.setval('bread_loops_pos_seq', 1, true);
SELECT pg_catalog.setval('bread_session_messages_seq_seq', 4, true);
SELECT pg_catalog.setval('bread_sessions_pos_seq', 1, true);
SELECT pg_catalog.setval('bread_task_runs_pos_seq', 1, true);
ALTER TABLE ONLY bread_checkpoints
    ADD CONSTRAINT bread_checkpoints_pkey PRIMARY KEY (id);
ALTER TABLE ONLY bread_crumbs
    ADD CONSTRAINT bread_crumbs_pkey PRIMARY KEY (run_id, seq);
ALTER TABLE ONLY bread_documents
    ADD CONSTRAINT bread_documents_pkey PRIMARY KEY (id);
ALTER TABLE ONLY bread_join_outputs
    ADD CONSTRAINT bread_join_outputs_pkey PRIMARY KEY (join_id, slot);
ALTER TABLE ONLY bread_joins
    ADD CONSTRAINT bread_joins_pkey PRIMARY KEY (id);
ALTER TABLE ONLY bread_kg_edges
    ADD CONSTRAINT bread_kg_edges_pkey PRIMARY KEY (id);
ALTER TABLE ONLY bread_kg_nodes
    ADD CONSTRAINT bread_kg_nodes_pkey PRIMARY KEY (id);
ALTER TABLE ONLY bread_loop_iterations
    ADD CONSTRAINT bread_loop_iterations_pkey PRIMARY KEY (id);
ALTER TABLE ONLY bread_loops
    ADD CONSTRAINT bread_loops_pkey PRIMARY KEY (id);
ALTER TABLE ONLY bread_runs
    ADD CONSTRAINT bread_runs_pkey PRIMARY KEY (id);
ALTER TABLE ONLY bread_session_messages
    ADD CONSTRAINT bread_session_messages_pkey PRIMARY KEY (id);
ALTER TABLE ONLY bread_sessions
    ADD CONSTRAINT bread_sessions_pkey PRIMARY KEY (id);
ALTER TABLE ONLY bread_task_runs
    ADD CONSTRAINT bread_task_runs_pkey PRIMARY KEY (id);
CREATE INDEX idx_bread_checkpoints_created ON bread_checkpoints USING btree (created_at, pos);
CREATE INDEX idx_bread_checkpoints_session ON bread_checkpoints USING btree (session_id);
CREATE INDEX idx_bread_crumbs_session ON bread_crumbs USING btree (session_id);
CREATE INDEX idx_bread_documents_agent ON bread_documents USING btree (agent_id);
CREATE INDEX idx_bread_kg_edges_from ON bread_kg_edges USING btree (from_id);
CREATE INDEX idx_bread_kg_edges_to ON bread_kg_edges USING btree (to_id);
CREATE INDEX idx_bread_kg_nodes_agent ON bread_kg_nodes USING btree (agent_id, session_id);
CREATE INDEX idx_bread_loop_iterations_loop ON bread_loop_iterations USING btree (loop_id, idx);
CREATE INDEX idx_bread_loops_agent ON bread_loops USING btree (agent_id);
CREATE INDEX idx_bread_loops_session ON bread_loops USING btree (session_id);
CREATE INDEX idx_bread_runs_lease ON bread_runs USING btree (status, lease_until);
CREATE INDEX idx_bread_runs_owner ON bread_runs USING btree (owner, status);
CREATE INDEX idx_bread_runs_session ON bread_runs USING btree (session_id);
CREATE INDEX idx_bread_session_messages_session ON bread_session_messages USING btree (session_id, seq);
CREATE INDEX idx_bread_sessions_tags ON bread_sessions USING gin (tags jsonb_path_ops);
CREATE INDEX idx_bread_sessions_updated ON bread_sessions USING btree (updated_at);
CREATE INDEX idx_bread_task_runs_agent ON bread_task_runs USING btree (agent_id);
CREATE INDEX idx_bread_task_runs_session ON bread_task_runs USING btree (session_id);
CREATE INDEX idx_bread_task_runs_task ON bread_task_runs USING btree (task_id);
ALTER TABLE ONLY bread_checkpoints
    ADD CONSTRAINT bread_checkpoints_session_id_fkey FOREIGN KEY (session_id) REFERENCES bread_sessions(id) ON DELETE CASCADE;
ALTER TABLE ONLY bread_crumbs
    ADD CONSTRAINT bread_crumbs_session_id_fkey FOREIGN KEY (session_id) REFERENCES bread_sessions(id) ON DELETE CASCADE;
ALTER TABLE ONLY bread_join_outputs
    ADD CONSTRAINT bread_join_outputs_join_id_fkey FOREIGN KEY (join_id) REFERENCES bread_joins(id) ON DELETE CASCADE;
ALTER TABLE ONLY bread_kg_edges
    ADD CONSTRAINT bread_kg_edges_from_id_fkey FOREIGN KEY (from_id) REFERENCES bread_kg_nodes(id) ON DELETE CASCADE;
ALTER TABLE ONLY bread_kg_edges
    ADD CONSTRAINT bread_kg_edges_to_id_fkey FOREIGN KEY (to_id) REFERENCES bread_kg_nodes(id) ON DELETE CASCADE;
ALTER TABLE ONLY bread_loop_iterations
    ADD CONSTRAINT bread_loop_iterations_loop_id_fkey FOREIGN KEY (loop_id) REFERENCES bread_loops(id) ON DELETE CASCADE;
ALTER TABLE ONLY bread_runs
    ADD CONSTRAINT bread_runs_session_id_fkey FOREIGN KEY (session_id) REFERENCES bread_sessions(id) ON DELETE CASCADE;
ALTER TABLE ONLY bread_session_messages
    ADD CONSTRAINT bread_session_messages_session_id_fkey FOREIGN KEY (session_id) REFERENCES bread_sessions(id) ON DELETE CASCADE;
