-- A warehouse of schema version 4 (the release before accounts):
-- release1.sql upgraded in place by migrations 2 to 4 as shipped (commit
-- 8c61cf6, holding the file at schema 4), then dumped with sqlite3's .dump.
-- Upgrade tests load it with LoadSQL.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE sync_runs (
    run_id          INTEGER PRIMARY KEY,
    trigger         TEXT    NOT NULL,
    started_at      TEXT    NOT NULL,
    finished_at     TEXT,
    heartbeat_at    TEXT    NOT NULL,
    status          TEXT    NOT NULL DEFAULT 'running'
        CHECK (status IN ('running', 'succeeded', 'failed', 'interrupted', 'abandoned')),
    pages           INTEGER NOT NULL DEFAULT 0,
    cards_seen      INTEGER NOT NULL DEFAULT 0,
    cards_new       INTEGER NOT NULL DEFAULT 0,
    cards_changed   INTEGER NOT NULL DEFAULT 0,
    cards_unchanged INTEGER NOT NULL DEFAULT 0,
    cards_removed   INTEGER NOT NULL DEFAULT 0,
    requests        INTEGER NOT NULL DEFAULT 0,
    retries         INTEGER NOT NULL DEFAULT 0,
    rate_limited    INTEGER NOT NULL DEFAULT 0,
    auth_requests   INTEGER NOT NULL DEFAULT 0,
    walk_consistent INTEGER CHECK (walk_consistent IN (0, 1)),
    error           TEXT,
    version         TEXT    NOT NULL DEFAULT ''
, cards_rejected INTEGER NOT NULL DEFAULT 0, removals_held INTEGER NOT NULL DEFAULT 0, account_error TEXT) STRICT;
INSERT INTO sync_runs VALUES(1,'backfill','2025-03-01T12:15:00Z','2025-03-01T12:15:00Z','2025-03-01T12:15:00Z','succeeded',3,40,40,0,0,0,5,0,0,1,1,NULL,'v0.1.0',0,0,NULL);
INSERT INTO sync_runs VALUES(2,'schedule','2025-03-01T12:30:00Z','2025-03-01T12:30:00Z','2025-03-01T12:30:00Z','succeeded',3,40,1,1,38,0,4,0,0,0,1,NULL,'v0.1.0',0,0,NULL);
INSERT INTO sync_runs VALUES(3,'schedule','2025-03-01T12:45:00Z','2025-03-01T12:45:00Z','2025-03-01T12:45:00Z','succeeded',3,40,0,0,40,1,4,0,0,0,1,NULL,'v0.1.0',0,0,NULL);
INSERT INTO sync_runs VALUES(4,'schedule','2025-03-01T13:00:00Z','2025-03-01T13:00:00Z','2025-03-01T13:00:00Z','failed',0,0,0,0,0,0,2,1,0,0,NULL,'read account: fetch account: gave up after 2 attempts and 1.143s of waiting (next wait 1.235s would pass the cap): service unavailable: status 503: Service Unavailable','v0.1.0',0,0,NULL);
INSERT INTO sync_runs VALUES(5,'schedule','2025-03-01T13:15:00Z','2025-03-01T13:15:00Z','2025-03-01T13:15:00Z','succeeded',3,40,0,1,39,0,4,0,0,0,1,NULL,'v0.1.0',0,0,NULL);
INSERT INTO sync_runs VALUES(6,'backfill','2025-03-01T13:30:00Z','2025-03-01T13:30:00Z','2025-03-01T13:30:00Z','succeeded',1,4,4,0,0,0,0,0,0,0,0,NULL,'v0.1.0',0,0,NULL);
CREATE TABLE IF NOT EXISTS "card_state" (
    card_id        TEXT    PRIMARY KEY,
    data           TEXT    NOT NULL CHECK (json_valid(data)),
    first_seen_at  TEXT    NOT NULL,
    last_seen_at   TEXT    NOT NULL,
    updated_at     TEXT    NOT NULL,
    removed_at     TEXT,
    first_seen_run INTEGER NOT NULL REFERENCES sync_runs (run_id),
    last_seen_run  INTEGER NOT NULL REFERENCES sync_runs (run_id)
, data_hash BLOB) STRICT;
INSERT INTO card_state VALUES('1001','{"id":1001,"masked_number":"453201******5120","card_number":"453201******5120","brand":"visa","status":"frozen","balance":"3806.11","currency":"USD","holder":{"name":"Zoë Kowalski","email":"holder1001@example.com","phone":"+1-555-0164","address":{"country":"DE","city":"Berlin"}},"label":"SaaS tools","expiry_month":5,"expiry_year":2028,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"4100.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":23}},"risk_score":0.90,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-ul7fqxy"},"created_at":"2023-01-01T00:23:45Z","updated_at":"2025-03-01T12:15:00Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:30:00Z',NULL,1,5,X'0acaacffe168d050825867a7f981eeca');
INSERT INTO card_state VALUES('1002','{"id":1002,"masked_number":"411111******0976","card_number":"411111******0976","brand":"visa","status":"active","balance":"3825.65","currency":"USD","holder":{"name":"Ólafur Kowalski","email":"holder1002@example.com","phone":"+1-555-0182","address":{"country":"US","city":"Austin"}},"label":null,"expiry_month":10,"expiry_year":2026,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"1800.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":43}},"risk_score":0.12,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-35vrrvyi"},"created_at":"2023-01-01T07:36:03Z","updated_at":"2023-01-01T07:36:03Z"}','2025-03-01T12:15:00Z','2025-03-01T12:15:00Z','2025-03-01T12:15:00Z','2025-03-01T12:45:00Z',1,1,X'18809faa6d4c7bbac163b965c8b9608b');
INSERT INTO card_state VALUES('1003','{"id":1003,"masked_number":"411111******1458","card_number":"411111******1458","brand":"visa","status":"frozen","balance":"3483.44","currency":"EUR","holder":{"name":"Ólafur Smith","email":"holder1003@example.com","phone":"+1-555-0158","address":{"country":"SG","city":"Singapore"}},"label":"Facebook Ads","expiry_month":3,"expiry_year":2026,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"700.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":8}},"risk_score":0.93,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-arwfto7a"},"created_at":"2023-01-01T17:07:05Z","updated_at":"2025-03-01T13:00:00Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T13:15:00Z',NULL,1,5,X'79aee7f57e24b133af1b9e8358673af3');
INSERT INTO card_state VALUES('1005','{"id":1005,"masked_number":"555555******9001","card_number":"555555******9001","brand":"mastercard","status":"pending","balance":"4947.84","currency":"HKD","holder":{"name":"Omar Haddad","email":"holder1005@example.com","phone":"+1-555-0131","address":{"country":"GB","city":"London"}},"label":"Test card","expiry_month":1,"expiry_year":2027,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"5000.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":17}},"risk_score":0.90,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-66821nkl"},"created_at":"2023-01-01T19:02:00Z","updated_at":"2023-02-28T22:13:19Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'415abd01c7050057405c9b19595dd8d3');
INSERT INTO card_state VALUES('1010','{"id":1010,"masked_number":"453201******5885","card_number":"453201******5885","brand":"visa","status":"active","balance":"4480.43","currency":"USD","holder":{"name":"Chloé Silva","email":"holder1010@example.com","phone":null,"address":{"country":"SG","city":"Singapore"}},"label":null,"expiry_month":1,"expiry_year":2030,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"5000.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":43}},"risk_score":0.83,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-2dr8me5u"},"created_at":"2023-01-02T03:31:49Z","updated_at":"2023-01-02T03:31:49Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'09a8ea679fc1a7dff7e976c705dc8fbe');
INSERT INTO card_state VALUES('1011','{"id":1011,"masked_number":"411111******9833","card_number":"411111******9833","brand":"visa","status":"active","balance":"3088.81","currency":"USD","holder":{"name":"José Tanaka","email":"holder1011@example.com","phone":"+1-555-0140","address":{"country":"BR","city":"São Paulo"}},"label":null,"expiry_month":10,"expiry_year":2027,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"4500.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":33}},"risk_score":0.76,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-e948ugo"},"created_at":"2023-01-02T09:13:27Z","updated_at":"2023-03-20T23:59:46Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'e628f1fa2193ef114bfc3b7ec2c98ce6');
INSERT INTO card_state VALUES('1012','{"id":1012,"masked_number":"522222******2091","card_number":"522222******2091","brand":"mastercard","status":"active","balance":"311.66","currency":"EUR","holder":{"name":"Wei Kim","email":"holder1012@example.com","phone":"+1-555-0172","address":{"country":"DE","city":"Berlin"}},"label":null,"expiry_month":10,"expiry_year":2030,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"4400.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":13}},"risk_score":0.32,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-7c0pveho"},"created_at":"2023-01-02T17:15:19Z","updated_at":"2023-03-04T18:00:29Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'dbdea01342a66f141d3dc35c72408729');
INSERT INTO card_state VALUES('1015','{"id":1015,"masked_number":"485932******3217","card_number":"485932******3217","brand":"visa","status":"active","balance":"239.21","currency":"EUR","holder":{"name":"Ólafur O''Brien","email":"holder1015@example.com","phone":null,"address":{"country":"US","city":"Austin"}},"label":"Test card","expiry_month":11,"expiry_year":2029,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"4800.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":18}},"risk_score":0.91,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-12g7i2r0"},"created_at":"2023-01-02T18:40:55Z","updated_at":"2023-03-28T03:58:46Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'3353c6525f6912be4976ad60a2c54100');
INSERT INTO card_state VALUES('1021','{"id":1021,"masked_number":"531993******1812","card_number":"531993******1812","brand":"mastercard","status":"active","balance":"3619.12","currency":"USD","holder":{"name":"Aiko Tanaka","email":"holder1021@example.com","phone":null,"address":{"country":"BR","city":"São Paulo"}},"label":"TikTok campaign Q3","expiry_month":1,"expiry_year":2030,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"3800.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":18}},"risk_score":0.66,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-5bheyfzm"},"created_at":"2023-01-03T05:52:26Z","updated_at":"2023-01-03T05:52:26Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'89b7b6432095b75e1a863014e8be0a30');
INSERT INTO card_state VALUES('1022','{"id":1022,"masked_number":"555555******9462","card_number":"555555******9462","brand":"mastercard","status":"active","balance":"4234.89","currency":"USD","holder":{"name":"Aiko García","email":"holder1022@example.com","phone":"+1-555-0180","address":{"country":"DE","city":"Berlin"}},"label":"Meta — retargeting","expiry_month":10,"expiry_year":2027,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"1500.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":53}},"risk_score":0.48,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-5lo9q5dx"},"created_at":"2023-01-03T11:30:01Z","updated_at":"2023-01-14T19:45:57Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'1b99caa2e5e2619789557cdda618007d');
INSERT INTO card_state VALUES('1023','{"id":1023,"masked_number":"453201******8078","card_number":"453201******8078","brand":"visa","status":"cancelled","balance":"400.98","currency":"EUR","holder":{"name":"王 Haddad","email":"holder1023@example.com","phone":"+1-555-0117","address":{"country":"GB","city":"London"}},"label":"Facebook Ads","expiry_month":4,"expiry_year":2028,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"2700.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":53}},"risk_score":0.13,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-axxoe5xb"},"created_at":"2023-01-03T14:34:17Z","updated_at":"2023-01-03T14:34:17Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'fa0dda1121d659028fbd10ad67ba14dc');
INSERT INTO card_state VALUES('1024','{"id":1024,"masked_number":"555555******2098","card_number":"555555******2098","brand":"mastercard","status":"pending","balance":"464.58","currency":"USD","holder":{"name":"Noah Tanaka","email":"holder1024@example.com","phone":"+1-555-0174","address":{"country":"HK","city":"Hong Kong"}},"label":null,"expiry_month":7,"expiry_year":2027,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"2200.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":32}},"risk_score":0.68,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-1f6l7qw8"},"created_at":"2023-01-03T23:43:43Z","updated_at":"2023-01-26T05:12:37Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'6bad1cfc8f7c001e1c277132da950692');
INSERT INTO card_state VALUES('1030','{"id":1030,"masked_number":"402400******7299","card_number":"402400******7299","brand":"visa","status":"active","balance":"2465.91","currency":"USD","holder":{"name":"Chloé Nguyen","email":"holder1030@example.com","phone":null,"address":{"country":"US","city":"Austin"}},"label":"Facebook Ads","expiry_month":7,"expiry_year":2029,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"3200.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":18}},"risk_score":0.21,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-84n5bqfi"},"created_at":"2023-01-04T03:39:03Z","updated_at":"2023-02-10T20:51:53Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'2f89b757b679798ebfcbb904beb33d51');
INSERT INTO card_state VALUES('1031','{"id":1031,"masked_number":"453201******3999","card_number":"453201******3999","brand":"visa","status":"active","balance":"3921.19","currency":"USD","holder":{"name":"Noah Rossi","email":"holder1031@example.com","phone":null,"address":{"country":"GB","city":"London"}},"label":"Travel & expenses","expiry_month":11,"expiry_year":2030,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"1300.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":23}},"risk_score":0.84,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-bbjews7g"},"created_at":"2023-01-04T08:45:06Z","updated_at":"2023-01-04T08:45:06Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'3a31e021d3f871c8395e09d665a29eaf');
INSERT INTO card_state VALUES('1032','{"id":1032,"masked_number":"411111******1190","card_number":"411111******1190","brand":"visa","status":"active","balance":"627.25","currency":"USD","holder":{"name":"Mei Nguyen","email":"holder1032@example.com","phone":null,"address":{"country":"BR","city":"São Paulo"}},"label":"SaaS tools","expiry_month":7,"expiry_year":2030,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"700.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":17}},"risk_score":0.53,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-2c18izac"},"created_at":"2023-01-04T13:25:58Z","updated_at":"2023-01-04T13:25:58Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'8d296020904ee78f71bdf5abe7e39497');
INSERT INTO card_state VALUES('1037','{"id":1037,"masked_number":"453201******6051","card_number":"453201******6051","brand":"visa","status":"frozen","balance":"1819.80","currency":"USD","holder":{"name":"Noah Rossi","email":"holder1037@example.com","phone":"+1-555-0144","address":{"country":"DE","city":"Berlin"}},"label":"Test card","expiry_month":9,"expiry_year":2026,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"2900.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":24}},"risk_score":0.19,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-82wvtbr2"},"created_at":"2023-01-04T20:24:53Z","updated_at":"2023-03-05T09:25:44Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'7a57fa1b846cf964fa0af6ea5255a0f2');
INSERT INTO card_state VALUES('1041','{"id":1041,"masked_number":"485932******5704","card_number":"485932******5704","brand":"visa","status":"active","balance":"4713.96","currency":"EUR","holder":{"name":"José Nguyen","email":"holder1041@example.com","phone":null,"address":{"country":"GB","city":"London"}},"label":"Google Ads / EU","expiry_month":4,"expiry_year":2029,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"1900.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":19}},"risk_score":0.78,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-4d939qwu"},"created_at":"2023-01-05T00:31:33Z","updated_at":"2023-03-25T03:50:28Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'dafc70a948a30a807fa9963af8847739');
INSERT INTO card_state VALUES('1042','{"id":1042,"masked_number":"522222******8614","card_number":"522222******8614","brand":"mastercard","status":"active","balance":"446.33","currency":"USD","holder":{"name":"Chloé Dubois","email":"holder1042@example.com","phone":null,"address":{"country":"DE","city":"Berlin"}},"label":"Google Ads / EU","expiry_month":6,"expiry_year":2030,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"400.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":48}},"risk_score":0.28,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-ckfgp5u"},"created_at":"2023-01-05T10:46:39Z","updated_at":"2023-01-05T10:46:39Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'f1c7adb8b71f29236b8d1ddd790f937a');
INSERT INTO card_state VALUES('1043','{"id":1043,"masked_number":"485932******7486","card_number":"485932******7486","brand":"visa","status":"active","balance":"3016.35","currency":"USD","holder":{"name":"José Tanaka","email":"holder1043@example.com","phone":"+1-555-0147","address":{"country":"GB","city":"London"}},"label":"Google Ads / EU","expiry_month":6,"expiry_year":2030,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"4600.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":41}},"risk_score":0.15,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-3s1xcve5"},"created_at":"2023-01-05T15:58:16Z","updated_at":"2023-03-18T02:09:00Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'ac27e0585e636e3e3de3800265cc7a82');
INSERT INTO card_state VALUES('1044','{"id":1044,"masked_number":"453201******8656","card_number":"453201******8656","brand":"visa","status":"active","balance":"1978.85","currency":"USD","holder":{"name":"Priya Zhang","email":"holder1044@example.com","phone":null,"address":{"country":"SG","city":"Singapore"}},"label":null,"expiry_month":5,"expiry_year":2030,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"3400.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":49}},"risk_score":0.78,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-34smof8e"},"created_at":"2023-01-05T22:40:19Z","updated_at":"2023-01-05T22:40:19Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'ef1939d92f0b22d6ec85bcad7e8be79e');
INSERT INTO card_state VALUES('1045','{"id":1045,"masked_number":"545454******2497","card_number":"545454******2497","brand":"mastercard","status":"active","balance":"646.05","currency":"EUR","holder":{"name":"Wei Smith","email":"holder1045@example.com","phone":"+1-555-0184","address":{"country":"HK","city":"Hong Kong"}},"label":"Facebook Ads","expiry_month":5,"expiry_year":2030,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"2900.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":8}},"risk_score":0.79,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-7e9g3q5j"},"created_at":"2023-01-06T04:00:50Z","updated_at":"2023-02-10T19:24:19Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'fb94c110d41b70a89e8175cfe8879637');
INSERT INTO card_state VALUES('1046','{"id":1046,"masked_number":"453201******8037","card_number":"453201******8037","brand":"visa","status":"active","balance":"1064.57","currency":"USD","holder":{"name":"王 Smith","email":"holder1046@example.com","phone":null,"address":{"country":"DE","city":"Berlin"}},"label":"Google Ads / EU","expiry_month":5,"expiry_year":2027,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"2400.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":53}},"risk_score":0.76,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-fztw7gq"},"created_at":"2023-01-06T07:30:06Z","updated_at":"2023-01-06T07:30:06Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'a3ab0169bc4c57d0b3deb57f80bbf099');
INSERT INTO card_state VALUES('1051','{"id":1051,"masked_number":"545454******0561","card_number":"545454******0561","brand":"mastercard","status":"frozen","balance":"3063.73","currency":"USD","holder":{"name":"Aiko García","email":"holder1051@example.com","phone":"+1-555-0141","address":{"country":"DE","city":"Berlin"}},"label":null,"expiry_month":7,"expiry_year":2029,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"3100.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":28}},"risk_score":0.63,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-655jdlel"},"created_at":"2023-01-06T12:40:33Z","updated_at":"2023-01-12T18:32:47Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'6f19e993f6921058832e7382147657fb');
INSERT INTO card_state VALUES('1057','{"id":1057,"masked_number":"453201******5634","card_number":"453201******5634","brand":"visa","status":"active","balance":"2200.31","currency":"HKD","holder":{"name":"Wei Kowalski","email":"holder1057@example.com","phone":null,"address":{"country":"BR","city":"São Paulo"}},"label":null,"expiry_month":12,"expiry_year":2027,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"3300.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":27}},"risk_score":0.27,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-4zx5fsi0"},"created_at":"2023-01-06T22:10:09Z","updated_at":"2023-03-16T23:02:03Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'97da494604c9a7700e46073cf13fcde0');
INSERT INTO card_state VALUES('1058','{"id":1058,"masked_number":"411111******6186","card_number":"411111******6186","brand":"visa","status":"active","balance":"3079.93","currency":"USD","holder":{"name":"Chloé Kowalski","email":"holder1058@example.com","phone":"+1-555-0191","address":{"country":"SG","city":"Singapore"}},"label":"Team \"growth\"","expiry_month":10,"expiry_year":2030,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"600.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":42}},"risk_score":0.59,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-1iggpiq7"},"created_at":"2023-01-07T03:47:58Z","updated_at":"2023-02-14T10:37:28Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'426d74458fd5b8f5bac36578f578ac48');
INSERT INTO card_state VALUES('1064','{"id":1064,"masked_number":"485932******9509","card_number":"485932******9509","brand":"visa","status":"active","balance":"4906.98","currency":"USD","holder":{"name":"Lucas Silva","email":"holder1064@example.com","phone":null,"address":{"country":"HK","city":"Hong Kong"}},"label":null,"expiry_month":12,"expiry_year":2026,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"4400.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":37}},"risk_score":0.52,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-c4l2z4oa"},"created_at":"2023-01-07T07:02:49Z","updated_at":"2023-01-07T07:02:49Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'2cb22405174b6add855841e3d828a678');
INSERT INTO card_state VALUES('1065','{"id":1065,"masked_number":"531993******6210","card_number":"531993******6210","brand":"mastercard","status":"active","balance":"533.13","currency":"USD","holder":{"name":"Ana Tanaka","email":"holder1065@example.com","phone":"+1-555-0199","address":{"country":"GB","city":"London"}},"label":"Travel & expenses","expiry_month":7,"expiry_year":2030,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"4800.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":24}},"risk_score":0.43,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-cdf3ljxq"},"created_at":"2023-01-07T16:10:36Z","updated_at":"2023-01-07T16:10:36Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'97210b024c4a375e90329adf41b2dc92');
INSERT INTO card_state VALUES('1070','{"id":1070,"masked_number":"453201******9368","card_number":"453201******9368","brand":"visa","status":"active","balance":"2647.84","currency":"USD","holder":{"name":"Zoë Zhang","email":"holder1070@example.com","phone":"+1-555-0155","address":{"country":"HK","city":"Hong Kong"}},"label":null,"expiry_month":3,"expiry_year":2028,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"4900.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":24}},"risk_score":0.80,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-2nzqjckg"},"created_at":"2023-01-07T23:51:06Z","updated_at":"2023-01-07T23:51:06Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'5bf8b2c8c2e21d46dd9a914dd5b917b9');
INSERT INTO card_state VALUES('1071','{"id":1071,"masked_number":"411111******0849","card_number":"411111******0849","brand":"visa","status":"active","balance":"3353.30","currency":"USD","holder":{"name":"Lucas Nguyen","email":"holder1071@example.com","phone":"+1-555-0195","address":{"country":"GB","city":"London"}},"label":null,"expiry_month":9,"expiry_year":2026,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"2900.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":42}},"risk_score":0.21,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-1ufz12no"},"created_at":"2023-01-08T05:22:35Z","updated_at":"2023-01-08T14:23:25Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'2dfbf2e00fe1275b5b20ce21852b4b29');
INSERT INTO card_state VALUES('1072','{"id":1072,"masked_number":"522222******2574","card_number":"522222******2574","brand":"mastercard","status":"active","balance":"3818.49","currency":"HKD","holder":{"name":"Liam Kim","email":"holder1072@example.com","phone":"+1-555-0158","address":{"country":"SG","city":"Singapore"}},"label":"TikTok campaign Q3","expiry_month":4,"expiry_year":2027,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"4700.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":12}},"risk_score":0.51,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-3o7hpbym"},"created_at":"2023-01-08T10:04:04Z","updated_at":"2023-01-08T10:04:04Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'8e8edd308a4a77a21296db265df99c2d');
INSERT INTO card_state VALUES('1073','{"id":1073,"masked_number":"411111******8582","card_number":"411111******8582","brand":"visa","status":"active","balance":"3792.35","currency":"USD","holder":{"name":"Ólafur Tanaka","email":"holder1073@example.com","phone":"+1-555-0121","address":{"country":"HK","city":"Hong Kong"}},"label":"Meta — retargeting","expiry_month":10,"expiry_year":2028,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"4900.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":24}},"risk_score":0.24,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-6xwoeqdu"},"created_at":"2023-01-08T16:38:04Z","updated_at":"2023-01-15T09:42:12Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'e48e6264c63bfb43e2dc3f161374e8b2');
INSERT INTO card_state VALUES('1077','{"id":1077,"masked_number":"453201******9155","card_number":"453201******9155","brand":"visa","status":"active","balance":"1878.64","currency":"USD","holder":{"name":"Omar García","email":"holder1077@example.com","phone":null,"address":{"country":"GB","city":"London"}},"label":null,"expiry_month":5,"expiry_year":2027,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"1200.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":7}},"risk_score":0.45,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-8zwuf7w0"},"created_at":"2023-01-08T19:11:35Z","updated_at":"2023-01-08T19:11:35Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'0acbaf67a6cbc1098bc468d9c995a307');
INSERT INTO card_state VALUES('1078','{"id":1078,"masked_number":"485932******9156","card_number":"485932******9156","brand":"visa","status":"active","balance":"3044.65","currency":"USD","holder":{"name":"Sven Smith","email":"holder1078@example.com","phone":null,"address":{"country":"HK","city":"Hong Kong"}},"label":"Meta — retargeting","expiry_month":3,"expiry_year":2027,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"1300.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":24}},"risk_score":0.89,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-az1vxir8"},"created_at":"2023-01-09T02:35:27Z","updated_at":"2023-01-09T02:35:27Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'8bff9e41af07fee9be70bfa25a524e63');
INSERT INTO card_state VALUES('1079','{"id":1079,"masked_number":"402400******8307","card_number":"402400******8307","brand":"visa","status":"active","balance":"2679.37","currency":"USD","holder":{"name":"Chloé Kowalski","email":"holder1079@example.com","phone":"+1-555-0112","address":{"country":"US","city":"Austin"}},"label":null,"expiry_month":7,"expiry_year":2029,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"4100.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":49}},"risk_score":0.68,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-7b565gdo"},"created_at":"2023-01-09T06:07:13Z","updated_at":"2023-01-09T06:07:13Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'ae843c914687f252ea054146cd77c4e4');
INSERT INTO card_state VALUES('1080','{"id":1080,"masked_number":"555555******2945","card_number":"555555******2945","brand":"mastercard","status":"active","balance":"274.48","currency":"HKD","holder":{"name":"Liam Kim","email":"holder1080@example.com","phone":null,"address":{"country":"SG","city":"Singapore"}},"label":"TikTok campaign Q3","expiry_month":9,"expiry_year":2028,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"2200.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":29}},"risk_score":0.48,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-6c57enqq"},"created_at":"2023-01-09T13:27:04Z","updated_at":"2023-03-18T01:19:30Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'5a4133f9cbbe36cbaf56ca5bffe1359d');
INSERT INTO card_state VALUES('1081','{"id":1081,"masked_number":"522222******0879","card_number":"522222******0879","brand":"mastercard","status":"active","balance":"0.00","currency":"USD","holder":{"name":"Zoë O''Brien","email":"holder1081@example.com","phone":"+1-555-0110","address":{"country":"DE","city":"Berlin"}},"label":null,"expiry_month":9,"expiry_year":2026,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"5000.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":41}},"risk_score":0.48,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-8gsxl1a4"},"created_at":"2023-01-09T18:31:37Z","updated_at":"2023-01-15T03:03:53Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'd1b7c6a9858468b447204fc5eb97db8b');
INSERT INTO card_state VALUES('1084','{"id":1084,"masked_number":"453201******8718","card_number":"453201******8718","brand":"visa","status":"active","balance":"558.16","currency":"USD","holder":{"name":"Omar Rossi","email":"holder1084@example.com","phone":"+1-555-0155","address":{"country":"US","city":"Austin"}},"label":"Facebook Ads","expiry_month":11,"expiry_year":2026,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"3100.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":39}},"risk_score":0.50,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-9k725ifn"},"created_at":"2023-01-10T05:15:31Z","updated_at":"2023-03-06T04:26:25Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'd68ded6f8d4add0259fed813e3f49bb3');
INSERT INTO card_state VALUES('1088','{"id":1088,"masked_number":"522222******7326","card_number":"522222******7326","brand":"mastercard","status":"frozen","balance":"2809.04","currency":"USD","holder":{"name":"Liam 伟","email":"holder1088@example.com","phone":null,"address":{"country":"HK","city":"Hong Kong"}},"label":"Facebook Ads","expiry_month":11,"expiry_year":2028,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"1800.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":35}},"risk_score":0.76,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-17k4aqil"},"created_at":"2023-01-10T07:19:19Z","updated_at":"2023-01-10T07:19:19Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'96099e668922a0eacdc0f645715bddf6');
INSERT INTO card_state VALUES('1090','{"id":1090,"masked_number":"485932******7997","card_number":"485932******7997","brand":"visa","status":"active","balance":"-23.16","currency":"USD","holder":{"name":"王 Rossi","email":"holder1090@example.com","phone":null,"address":{"country":"DE","city":"Berlin"}},"label":null,"expiry_month":1,"expiry_year":2028,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"2900.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":41}},"risk_score":0.23,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-7aag8pzo"},"created_at":"2023-01-10T14:46:15Z","updated_at":"2023-04-05T10:22:46Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'e8a052b434361e8dfbf16a7f533c0929');
INSERT INTO card_state VALUES('1093','{"id":1093,"masked_number":"545454******0017","card_number":"545454******0017","brand":"mastercard","status":"active","balance":"3342.86","currency":"USD","holder":{"name":"Liam Zhang","email":"holder1093@example.com","phone":null,"address":{"country":"SG","city":"Singapore"}},"label":"TikTok campaign Q3","expiry_month":2,"expiry_year":2027,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"300.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":54}},"risk_score":0.46,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-4a832pcz"},"created_at":"2023-01-10T20:49:24Z","updated_at":"2023-01-10T20:49:24Z"}','2025-03-01T12:15:00Z','2025-03-01T13:15:00Z','2025-03-01T12:15:00Z',NULL,1,5,X'a909890cc42930fabf58541c65d3e06b');
INSERT INTO card_state VALUES('1094','{"id":1094,"masked_number":"555555******3795","card_number":"555555******3795","brand":"mastercard","status":"active","balance":"2539.73","currency":"USD","holder":{"name":"Ólafur Nguyen","email":"holder1094@example.com","phone":null,"address":{"country":"SG","city":"Singapore"}},"label":null,"expiry_month":7,"expiry_year":2028,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"3400.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":40}},"risk_score":0.55,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-1rizczhz"},"created_at":"2025-03-01T12:15:00Z","updated_at":"2025-03-01T12:15:00Z"}','2025-03-01T12:30:00Z','2025-03-01T13:15:00Z','2025-03-01T12:30:00Z',NULL,2,5,X'1519f920c1ddc9dbcfbc2e4e2579a8f8');
INSERT INTO card_state VALUES('9001','{"id":9001,"note":"card 4111 11** **** 1111 on file","café":"crème","url":"https://example.com/x"}','2025-03-01T13:30:00Z','2025-03-01T13:30:00Z','2025-03-01T13:30:00Z',NULL,6,6,X'6387550bd5fa343565e420ecc552a031');
INSERT INTO card_state VALUES('9002','{"id":9002,"ref":"5500/00**/****/0004","reference_no":"401288******1881","created_ms":1700000000007}','2025-03-01T13:30:00Z','2025-03-01T13:30:00Z','2025-03-01T13:30:00Z',NULL,6,6,X'520e4f51f2d90af23aa36859cd99ea41');
INSERT INTO card_state VALUES('9003','{"id":9003,"by_number":{"378282*****0005":"amex"}}','2025-03-01T13:30:00Z','2025-03-01T13:30:00Z','2025-03-01T13:30:00Z',NULL,6,6,X'c71e83a0e25788266e7c6784858b95df');
INSERT INTO card_state VALUES('9004','{"id":9004,"status":"active","Status":"ACTIVE","balance":"10.00"}','2025-03-01T13:30:00Z','2025-03-01T13:30:00Z','2025-03-01T13:30:00Z',NULL,6,6,X'706c03a9beac3812ef14472df8ee6ba9');
CREATE TABLE card_versions (
    card_id    TEXT    NOT NULL REFERENCES "card_state" (card_id),
    version    INTEGER NOT NULL,
    valid_from TEXT    NOT NULL,
    valid_to   TEXT,
    run_id     INTEGER NOT NULL REFERENCES sync_runs (run_id),
    change     TEXT    NOT NULL CHECK (change IN ('new', 'changed', 'removed', 'returned')),
    data       TEXT    NOT NULL CHECK (json_valid(data)),
    PRIMARY KEY (card_id, version)
) STRICT, WITHOUT ROWID;
INSERT INTO card_versions VALUES('1001',1,'2025-03-01T12:15:00Z','2025-03-01T12:30:00Z',1,'new','{"id":1001,"masked_number":"453201******5120","card_number":"453201******5120","brand":"visa","status":"active","balance":"3793.77","currency":"USD","holder":{"name":"Zoë Kowalski","email":"holder1001@example.com","phone":"+1-555-0164","address":{"country":"DE","city":"Berlin"}},"label":"SaaS tools","expiry_month":5,"expiry_year":2028,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"4100.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":23}},"risk_score":0.90,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-ul7fqxy"},"created_at":"2023-01-01T00:23:45Z","updated_at":"2023-02-21T04:06:11Z"}');
INSERT INTO card_versions VALUES('1001',2,'2025-03-01T12:30:00Z',NULL,2,'changed','{"id":1001,"masked_number":"453201******5120","card_number":"453201******5120","brand":"visa","status":"frozen","balance":"3806.11","currency":"USD","holder":{"name":"Zoë Kowalski","email":"holder1001@example.com","phone":"+1-555-0164","address":{"country":"DE","city":"Berlin"}},"label":"SaaS tools","expiry_month":5,"expiry_year":2028,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"4100.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":23}},"risk_score":0.90,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-ul7fqxy"},"created_at":"2023-01-01T00:23:45Z","updated_at":"2025-03-01T12:15:00Z"}');
INSERT INTO card_versions VALUES('1002',1,'2025-03-01T12:15:00Z','2025-03-01T12:45:00Z',1,'new','{"id":1002,"masked_number":"411111******0976","card_number":"411111******0976","brand":"visa","status":"active","balance":"3825.65","currency":"USD","holder":{"name":"Ólafur Kowalski","email":"holder1002@example.com","phone":"+1-555-0182","address":{"country":"US","city":"Austin"}},"label":null,"expiry_month":10,"expiry_year":2026,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"1800.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":43}},"risk_score":0.12,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-35vrrvyi"},"created_at":"2023-01-01T07:36:03Z","updated_at":"2023-01-01T07:36:03Z"}');
INSERT INTO card_versions VALUES('1002',2,'2025-03-01T12:45:00Z',NULL,3,'removed','{"id":1002,"masked_number":"411111******0976","card_number":"411111******0976","brand":"visa","status":"active","balance":"3825.65","currency":"USD","holder":{"name":"Ólafur Kowalski","email":"holder1002@example.com","phone":"+1-555-0182","address":{"country":"US","city":"Austin"}},"label":null,"expiry_month":10,"expiry_year":2026,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"1800.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":43}},"risk_score":0.12,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-35vrrvyi"},"created_at":"2023-01-01T07:36:03Z","updated_at":"2023-01-01T07:36:03Z"}');
INSERT INTO card_versions VALUES('1003',1,'2025-03-01T12:15:00Z','2025-03-01T13:15:00Z',1,'new','{"id":1003,"masked_number":"411111******1458","card_number":"411111******1458","brand":"visa","status":"active","balance":"3471.10","currency":"EUR","holder":{"name":"Ólafur Smith","email":"holder1003@example.com","phone":"+1-555-0158","address":{"country":"SG","city":"Singapore"}},"label":"Facebook Ads","expiry_month":3,"expiry_year":2026,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"700.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":8}},"risk_score":0.93,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-arwfto7a"},"created_at":"2023-01-01T17:07:05Z","updated_at":"2023-01-01T17:07:05Z"}');
INSERT INTO card_versions VALUES('1003',2,'2025-03-01T13:15:00Z',NULL,5,'changed','{"id":1003,"masked_number":"411111******1458","card_number":"411111******1458","brand":"visa","status":"frozen","balance":"3483.44","currency":"EUR","holder":{"name":"Ólafur Smith","email":"holder1003@example.com","phone":"+1-555-0158","address":{"country":"SG","city":"Singapore"}},"label":"Facebook Ads","expiry_month":3,"expiry_year":2026,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"700.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":8}},"risk_score":0.93,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-arwfto7a"},"created_at":"2023-01-01T17:07:05Z","updated_at":"2025-03-01T13:00:00Z"}');
INSERT INTO card_versions VALUES('1005',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1005,"masked_number":"555555******9001","card_number":"555555******9001","brand":"mastercard","status":"pending","balance":"4947.84","currency":"HKD","holder":{"name":"Omar Haddad","email":"holder1005@example.com","phone":"+1-555-0131","address":{"country":"GB","city":"London"}},"label":"Test card","expiry_month":1,"expiry_year":2027,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"5000.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":17}},"risk_score":0.90,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-66821nkl"},"created_at":"2023-01-01T19:02:00Z","updated_at":"2023-02-28T22:13:19Z"}');
INSERT INTO card_versions VALUES('1010',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1010,"masked_number":"453201******5885","card_number":"453201******5885","brand":"visa","status":"active","balance":"4480.43","currency":"USD","holder":{"name":"Chloé Silva","email":"holder1010@example.com","phone":null,"address":{"country":"SG","city":"Singapore"}},"label":null,"expiry_month":1,"expiry_year":2030,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"5000.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":43}},"risk_score":0.83,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-2dr8me5u"},"created_at":"2023-01-02T03:31:49Z","updated_at":"2023-01-02T03:31:49Z"}');
INSERT INTO card_versions VALUES('1011',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1011,"masked_number":"411111******9833","card_number":"411111******9833","brand":"visa","status":"active","balance":"3088.81","currency":"USD","holder":{"name":"José Tanaka","email":"holder1011@example.com","phone":"+1-555-0140","address":{"country":"BR","city":"São Paulo"}},"label":null,"expiry_month":10,"expiry_year":2027,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"4500.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":33}},"risk_score":0.76,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-e948ugo"},"created_at":"2023-01-02T09:13:27Z","updated_at":"2023-03-20T23:59:46Z"}');
INSERT INTO card_versions VALUES('1012',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1012,"masked_number":"522222******2091","card_number":"522222******2091","brand":"mastercard","status":"active","balance":"311.66","currency":"EUR","holder":{"name":"Wei Kim","email":"holder1012@example.com","phone":"+1-555-0172","address":{"country":"DE","city":"Berlin"}},"label":null,"expiry_month":10,"expiry_year":2030,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"4400.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":13}},"risk_score":0.32,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-7c0pveho"},"created_at":"2023-01-02T17:15:19Z","updated_at":"2023-03-04T18:00:29Z"}');
INSERT INTO card_versions VALUES('1015',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1015,"masked_number":"485932******3217","card_number":"485932******3217","brand":"visa","status":"active","balance":"239.21","currency":"EUR","holder":{"name":"Ólafur O''Brien","email":"holder1015@example.com","phone":null,"address":{"country":"US","city":"Austin"}},"label":"Test card","expiry_month":11,"expiry_year":2029,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"4800.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":18}},"risk_score":0.91,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-12g7i2r0"},"created_at":"2023-01-02T18:40:55Z","updated_at":"2023-03-28T03:58:46Z"}');
INSERT INTO card_versions VALUES('1021',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1021,"masked_number":"531993******1812","card_number":"531993******1812","brand":"mastercard","status":"active","balance":"3619.12","currency":"USD","holder":{"name":"Aiko Tanaka","email":"holder1021@example.com","phone":null,"address":{"country":"BR","city":"São Paulo"}},"label":"TikTok campaign Q3","expiry_month":1,"expiry_year":2030,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"3800.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":18}},"risk_score":0.66,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-5bheyfzm"},"created_at":"2023-01-03T05:52:26Z","updated_at":"2023-01-03T05:52:26Z"}');
INSERT INTO card_versions VALUES('1022',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1022,"masked_number":"555555******9462","card_number":"555555******9462","brand":"mastercard","status":"active","balance":"4234.89","currency":"USD","holder":{"name":"Aiko García","email":"holder1022@example.com","phone":"+1-555-0180","address":{"country":"DE","city":"Berlin"}},"label":"Meta — retargeting","expiry_month":10,"expiry_year":2027,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"1500.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":53}},"risk_score":0.48,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-5lo9q5dx"},"created_at":"2023-01-03T11:30:01Z","updated_at":"2023-01-14T19:45:57Z"}');
INSERT INTO card_versions VALUES('1023',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1023,"masked_number":"453201******8078","card_number":"453201******8078","brand":"visa","status":"cancelled","balance":"400.98","currency":"EUR","holder":{"name":"王 Haddad","email":"holder1023@example.com","phone":"+1-555-0117","address":{"country":"GB","city":"London"}},"label":"Facebook Ads","expiry_month":4,"expiry_year":2028,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"2700.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":53}},"risk_score":0.13,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-axxoe5xb"},"created_at":"2023-01-03T14:34:17Z","updated_at":"2023-01-03T14:34:17Z"}');
INSERT INTO card_versions VALUES('1024',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1024,"masked_number":"555555******2098","card_number":"555555******2098","brand":"mastercard","status":"pending","balance":"464.58","currency":"USD","holder":{"name":"Noah Tanaka","email":"holder1024@example.com","phone":"+1-555-0174","address":{"country":"HK","city":"Hong Kong"}},"label":null,"expiry_month":7,"expiry_year":2027,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"2200.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":32}},"risk_score":0.68,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-1f6l7qw8"},"created_at":"2023-01-03T23:43:43Z","updated_at":"2023-01-26T05:12:37Z"}');
INSERT INTO card_versions VALUES('1030',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1030,"masked_number":"402400******7299","card_number":"402400******7299","brand":"visa","status":"active","balance":"2465.91","currency":"USD","holder":{"name":"Chloé Nguyen","email":"holder1030@example.com","phone":null,"address":{"country":"US","city":"Austin"}},"label":"Facebook Ads","expiry_month":7,"expiry_year":2029,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"3200.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":18}},"risk_score":0.21,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-84n5bqfi"},"created_at":"2023-01-04T03:39:03Z","updated_at":"2023-02-10T20:51:53Z"}');
INSERT INTO card_versions VALUES('1031',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1031,"masked_number":"453201******3999","card_number":"453201******3999","brand":"visa","status":"active","balance":"3921.19","currency":"USD","holder":{"name":"Noah Rossi","email":"holder1031@example.com","phone":null,"address":{"country":"GB","city":"London"}},"label":"Travel & expenses","expiry_month":11,"expiry_year":2030,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"1300.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":23}},"risk_score":0.84,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-bbjews7g"},"created_at":"2023-01-04T08:45:06Z","updated_at":"2023-01-04T08:45:06Z"}');
INSERT INTO card_versions VALUES('1032',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1032,"masked_number":"411111******1190","card_number":"411111******1190","brand":"visa","status":"active","balance":"627.25","currency":"USD","holder":{"name":"Mei Nguyen","email":"holder1032@example.com","phone":null,"address":{"country":"BR","city":"São Paulo"}},"label":"SaaS tools","expiry_month":7,"expiry_year":2030,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"700.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":17}},"risk_score":0.53,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-2c18izac"},"created_at":"2023-01-04T13:25:58Z","updated_at":"2023-01-04T13:25:58Z"}');
INSERT INTO card_versions VALUES('1037',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1037,"masked_number":"453201******6051","card_number":"453201******6051","brand":"visa","status":"frozen","balance":"1819.80","currency":"USD","holder":{"name":"Noah Rossi","email":"holder1037@example.com","phone":"+1-555-0144","address":{"country":"DE","city":"Berlin"}},"label":"Test card","expiry_month":9,"expiry_year":2026,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"2900.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":24}},"risk_score":0.19,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-82wvtbr2"},"created_at":"2023-01-04T20:24:53Z","updated_at":"2023-03-05T09:25:44Z"}');
INSERT INTO card_versions VALUES('1041',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1041,"masked_number":"485932******5704","card_number":"485932******5704","brand":"visa","status":"active","balance":"4713.96","currency":"EUR","holder":{"name":"José Nguyen","email":"holder1041@example.com","phone":null,"address":{"country":"GB","city":"London"}},"label":"Google Ads / EU","expiry_month":4,"expiry_year":2029,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"1900.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":19}},"risk_score":0.78,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-4d939qwu"},"created_at":"2023-01-05T00:31:33Z","updated_at":"2023-03-25T03:50:28Z"}');
INSERT INTO card_versions VALUES('1042',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1042,"masked_number":"522222******8614","card_number":"522222******8614","brand":"mastercard","status":"active","balance":"446.33","currency":"USD","holder":{"name":"Chloé Dubois","email":"holder1042@example.com","phone":null,"address":{"country":"DE","city":"Berlin"}},"label":"Google Ads / EU","expiry_month":6,"expiry_year":2030,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"400.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":48}},"risk_score":0.28,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-ckfgp5u"},"created_at":"2023-01-05T10:46:39Z","updated_at":"2023-01-05T10:46:39Z"}');
INSERT INTO card_versions VALUES('1043',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1043,"masked_number":"485932******7486","card_number":"485932******7486","brand":"visa","status":"active","balance":"3016.35","currency":"USD","holder":{"name":"José Tanaka","email":"holder1043@example.com","phone":"+1-555-0147","address":{"country":"GB","city":"London"}},"label":"Google Ads / EU","expiry_month":6,"expiry_year":2030,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"4600.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":41}},"risk_score":0.15,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-3s1xcve5"},"created_at":"2023-01-05T15:58:16Z","updated_at":"2023-03-18T02:09:00Z"}');
INSERT INTO card_versions VALUES('1044',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1044,"masked_number":"453201******8656","card_number":"453201******8656","brand":"visa","status":"active","balance":"1978.85","currency":"USD","holder":{"name":"Priya Zhang","email":"holder1044@example.com","phone":null,"address":{"country":"SG","city":"Singapore"}},"label":null,"expiry_month":5,"expiry_year":2030,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"3400.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":49}},"risk_score":0.78,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-34smof8e"},"created_at":"2023-01-05T22:40:19Z","updated_at":"2023-01-05T22:40:19Z"}');
INSERT INTO card_versions VALUES('1045',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1045,"masked_number":"545454******2497","card_number":"545454******2497","brand":"mastercard","status":"active","balance":"646.05","currency":"EUR","holder":{"name":"Wei Smith","email":"holder1045@example.com","phone":"+1-555-0184","address":{"country":"HK","city":"Hong Kong"}},"label":"Facebook Ads","expiry_month":5,"expiry_year":2030,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"2900.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":8}},"risk_score":0.79,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-7e9g3q5j"},"created_at":"2023-01-06T04:00:50Z","updated_at":"2023-02-10T19:24:19Z"}');
INSERT INTO card_versions VALUES('1046',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1046,"masked_number":"453201******8037","card_number":"453201******8037","brand":"visa","status":"active","balance":"1064.57","currency":"USD","holder":{"name":"王 Smith","email":"holder1046@example.com","phone":null,"address":{"country":"DE","city":"Berlin"}},"label":"Google Ads / EU","expiry_month":5,"expiry_year":2027,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"2400.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":53}},"risk_score":0.76,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-fztw7gq"},"created_at":"2023-01-06T07:30:06Z","updated_at":"2023-01-06T07:30:06Z"}');
INSERT INTO card_versions VALUES('1051',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1051,"masked_number":"545454******0561","card_number":"545454******0561","brand":"mastercard","status":"frozen","balance":"3063.73","currency":"USD","holder":{"name":"Aiko García","email":"holder1051@example.com","phone":"+1-555-0141","address":{"country":"DE","city":"Berlin"}},"label":null,"expiry_month":7,"expiry_year":2029,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"3100.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":28}},"risk_score":0.63,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-655jdlel"},"created_at":"2023-01-06T12:40:33Z","updated_at":"2023-01-12T18:32:47Z"}');
INSERT INTO card_versions VALUES('1057',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1057,"masked_number":"453201******5634","card_number":"453201******5634","brand":"visa","status":"active","balance":"2200.31","currency":"HKD","holder":{"name":"Wei Kowalski","email":"holder1057@example.com","phone":null,"address":{"country":"BR","city":"São Paulo"}},"label":null,"expiry_month":12,"expiry_year":2027,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"3300.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":27}},"risk_score":0.27,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-4zx5fsi0"},"created_at":"2023-01-06T22:10:09Z","updated_at":"2023-03-16T23:02:03Z"}');
INSERT INTO card_versions VALUES('1058',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1058,"masked_number":"411111******6186","card_number":"411111******6186","brand":"visa","status":"active","balance":"3079.93","currency":"USD","holder":{"name":"Chloé Kowalski","email":"holder1058@example.com","phone":"+1-555-0191","address":{"country":"SG","city":"Singapore"}},"label":"Team \"growth\"","expiry_month":10,"expiry_year":2030,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"600.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":42}},"risk_score":0.59,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-1iggpiq7"},"created_at":"2023-01-07T03:47:58Z","updated_at":"2023-02-14T10:37:28Z"}');
INSERT INTO card_versions VALUES('1064',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1064,"masked_number":"485932******9509","card_number":"485932******9509","brand":"visa","status":"active","balance":"4906.98","currency":"USD","holder":{"name":"Lucas Silva","email":"holder1064@example.com","phone":null,"address":{"country":"HK","city":"Hong Kong"}},"label":null,"expiry_month":12,"expiry_year":2026,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"4400.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":37}},"risk_score":0.52,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-c4l2z4oa"},"created_at":"2023-01-07T07:02:49Z","updated_at":"2023-01-07T07:02:49Z"}');
INSERT INTO card_versions VALUES('1065',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1065,"masked_number":"531993******6210","card_number":"531993******6210","brand":"mastercard","status":"active","balance":"533.13","currency":"USD","holder":{"name":"Ana Tanaka","email":"holder1065@example.com","phone":"+1-555-0199","address":{"country":"GB","city":"London"}},"label":"Travel & expenses","expiry_month":7,"expiry_year":2030,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"4800.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":24}},"risk_score":0.43,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-cdf3ljxq"},"created_at":"2023-01-07T16:10:36Z","updated_at":"2023-01-07T16:10:36Z"}');
INSERT INTO card_versions VALUES('1070',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1070,"masked_number":"453201******9368","card_number":"453201******9368","brand":"visa","status":"active","balance":"2647.84","currency":"USD","holder":{"name":"Zoë Zhang","email":"holder1070@example.com","phone":"+1-555-0155","address":{"country":"HK","city":"Hong Kong"}},"label":null,"expiry_month":3,"expiry_year":2028,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"4900.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":24}},"risk_score":0.80,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-2nzqjckg"},"created_at":"2023-01-07T23:51:06Z","updated_at":"2023-01-07T23:51:06Z"}');
INSERT INTO card_versions VALUES('1071',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1071,"masked_number":"411111******0849","card_number":"411111******0849","brand":"visa","status":"active","balance":"3353.30","currency":"USD","holder":{"name":"Lucas Nguyen","email":"holder1071@example.com","phone":"+1-555-0195","address":{"country":"GB","city":"London"}},"label":null,"expiry_month":9,"expiry_year":2026,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"2900.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":42}},"risk_score":0.21,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-1ufz12no"},"created_at":"2023-01-08T05:22:35Z","updated_at":"2023-01-08T14:23:25Z"}');
INSERT INTO card_versions VALUES('1072',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1072,"masked_number":"522222******2574","card_number":"522222******2574","brand":"mastercard","status":"active","balance":"3818.49","currency":"HKD","holder":{"name":"Liam Kim","email":"holder1072@example.com","phone":"+1-555-0158","address":{"country":"SG","city":"Singapore"}},"label":"TikTok campaign Q3","expiry_month":4,"expiry_year":2027,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"4700.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":12}},"risk_score":0.51,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-3o7hpbym"},"created_at":"2023-01-08T10:04:04Z","updated_at":"2023-01-08T10:04:04Z"}');
INSERT INTO card_versions VALUES('1073',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1073,"masked_number":"411111******8582","card_number":"411111******8582","brand":"visa","status":"active","balance":"3792.35","currency":"USD","holder":{"name":"Ólafur Tanaka","email":"holder1073@example.com","phone":"+1-555-0121","address":{"country":"HK","city":"Hong Kong"}},"label":"Meta — retargeting","expiry_month":10,"expiry_year":2028,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"4900.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":24}},"risk_score":0.24,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-6xwoeqdu"},"created_at":"2023-01-08T16:38:04Z","updated_at":"2023-01-15T09:42:12Z"}');
INSERT INTO card_versions VALUES('1077',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1077,"masked_number":"453201******9155","card_number":"453201******9155","brand":"visa","status":"active","balance":"1878.64","currency":"USD","holder":{"name":"Omar García","email":"holder1077@example.com","phone":null,"address":{"country":"GB","city":"London"}},"label":null,"expiry_month":5,"expiry_year":2027,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"1200.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":7}},"risk_score":0.45,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-8zwuf7w0"},"created_at":"2023-01-08T19:11:35Z","updated_at":"2023-01-08T19:11:35Z"}');
INSERT INTO card_versions VALUES('1078',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1078,"masked_number":"485932******9156","card_number":"485932******9156","brand":"visa","status":"active","balance":"3044.65","currency":"USD","holder":{"name":"Sven Smith","email":"holder1078@example.com","phone":null,"address":{"country":"HK","city":"Hong Kong"}},"label":"Meta — retargeting","expiry_month":3,"expiry_year":2027,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"1300.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":24}},"risk_score":0.89,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-az1vxir8"},"created_at":"2023-01-09T02:35:27Z","updated_at":"2023-01-09T02:35:27Z"}');
INSERT INTO card_versions VALUES('1079',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1079,"masked_number":"402400******8307","card_number":"402400******8307","brand":"visa","status":"active","balance":"2679.37","currency":"USD","holder":{"name":"Chloé Kowalski","email":"holder1079@example.com","phone":"+1-555-0112","address":{"country":"US","city":"Austin"}},"label":null,"expiry_month":7,"expiry_year":2029,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"4100.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":49}},"risk_score":0.68,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-7b565gdo"},"created_at":"2023-01-09T06:07:13Z","updated_at":"2023-01-09T06:07:13Z"}');
INSERT INTO card_versions VALUES('1080',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1080,"masked_number":"555555******2945","card_number":"555555******2945","brand":"mastercard","status":"active","balance":"274.48","currency":"HKD","holder":{"name":"Liam Kim","email":"holder1080@example.com","phone":null,"address":{"country":"SG","city":"Singapore"}},"label":"TikTok campaign Q3","expiry_month":9,"expiry_year":2028,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"2200.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":29}},"risk_score":0.48,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-6c57enqq"},"created_at":"2023-01-09T13:27:04Z","updated_at":"2023-03-18T01:19:30Z"}');
INSERT INTO card_versions VALUES('1081',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1081,"masked_number":"522222******0879","card_number":"522222******0879","brand":"mastercard","status":"active","balance":"0.00","currency":"USD","holder":{"name":"Zoë O''Brien","email":"holder1081@example.com","phone":"+1-555-0110","address":{"country":"DE","city":"Berlin"}},"label":null,"expiry_month":9,"expiry_year":2026,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"5000.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":41}},"risk_score":0.48,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-8gsxl1a4"},"created_at":"2023-01-09T18:31:37Z","updated_at":"2023-01-15T03:03:53Z"}');
INSERT INTO card_versions VALUES('1084',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1084,"masked_number":"453201******8718","card_number":"453201******8718","brand":"visa","status":"active","balance":"558.16","currency":"USD","holder":{"name":"Omar Rossi","email":"holder1084@example.com","phone":"+1-555-0155","address":{"country":"US","city":"Austin"}},"label":"Facebook Ads","expiry_month":11,"expiry_year":2026,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"3100.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":39}},"risk_score":0.50,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-9k725ifn"},"created_at":"2023-01-10T05:15:31Z","updated_at":"2023-03-06T04:26:25Z"}');
INSERT INTO card_versions VALUES('1088',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1088,"masked_number":"522222******7326","card_number":"522222******7326","brand":"mastercard","status":"frozen","balance":"2809.04","currency":"USD","holder":{"name":"Liam 伟","email":"holder1088@example.com","phone":null,"address":{"country":"HK","city":"Hong Kong"}},"label":"Facebook Ads","expiry_month":11,"expiry_year":2028,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"1800.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":35}},"risk_score":0.76,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-17k4aqil"},"created_at":"2023-01-10T07:19:19Z","updated_at":"2023-01-10T07:19:19Z"}');
INSERT INTO card_versions VALUES('1090',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1090,"masked_number":"485932******7997","card_number":"485932******7997","brand":"visa","status":"active","balance":"-23.16","currency":"USD","holder":{"name":"王 Rossi","email":"holder1090@example.com","phone":null,"address":{"country":"DE","city":"Berlin"}},"label":null,"expiry_month":1,"expiry_year":2028,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"2900.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":41}},"risk_score":0.23,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-7aag8pzo"},"created_at":"2023-01-10T14:46:15Z","updated_at":"2023-04-05T10:22:46Z"}');
INSERT INTO card_versions VALUES('1093',1,'2025-03-01T12:15:00Z',NULL,1,'new','{"id":1093,"masked_number":"545454******0017","card_number":"545454******0017","brand":"mastercard","status":"active","balance":"3342.86","currency":"USD","holder":{"name":"Liam Zhang","email":"holder1093@example.com","phone":null,"address":{"country":"SG","city":"Singapore"}},"label":"TikTok campaign Q3","expiry_month":2,"expiry_year":2027,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"300.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":54}},"risk_score":0.46,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-4a832pcz"},"created_at":"2023-01-10T20:49:24Z","updated_at":"2023-01-10T20:49:24Z"}');
INSERT INTO card_versions VALUES('1094',1,'2025-03-01T12:30:00Z',NULL,2,'new','{"id":1094,"masked_number":"555555******3795","card_number":"555555******3795","brand":"mastercard","status":"active","balance":"2539.73","currency":"USD","holder":{"name":"Ólafur Nguyen","email":"holder1094@example.com","phone":null,"address":{"country":"SG","city":"Singapore"}},"label":null,"expiry_month":7,"expiry_year":2028,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":"3400.00","monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":40}},"risk_score":0.55,"metadata":{"source":"api","tags":[],"x_internal_ref":"ref-1rizczhz"},"created_at":"2025-03-01T12:15:00Z","updated_at":"2025-03-01T12:15:00Z"}');
INSERT INTO card_versions VALUES('9001',1,'2025-03-01T13:30:00Z',NULL,6,'new','{"id":9001,"note":"card 4111 11** **** 1111 on file","café":"crème","url":"https://example.com/x"}');
INSERT INTO card_versions VALUES('9002',1,'2025-03-01T13:30:00Z',NULL,6,'new','{"id":9002,"ref":"5500/00**/****/0004","reference_no":"401288******1881","created_ms":1700000000007}');
INSERT INTO card_versions VALUES('9003',1,'2025-03-01T13:30:00Z',NULL,6,'new','{"id":9003,"by_number":{"378282*****0005":"amex"}}');
INSERT INTO card_versions VALUES('9004',1,'2025-03-01T13:30:00Z',NULL,6,'new','{"id":9004,"status":"active","Status":"ACTIVE","balance":"10.00"}');
CREATE TABLE card_fields (
    name          TEXT    PRIMARY KEY,
    json_types    TEXT    NOT NULL,
    first_run     INTEGER NOT NULL REFERENCES sync_runs (run_id),
    last_run      INTEGER NOT NULL REFERENCES sync_runs (run_id),
    first_seen_at TEXT    NOT NULL
, column_name TEXT, in_flat_view INTEGER NOT NULL DEFAULT 1
    CHECK (in_flat_view IN (0, 1))) STRICT;
INSERT INTO card_fields VALUES('id','number',1,6,'2025-03-01T12:15:00Z','id',1);
INSERT INTO card_fields VALUES('masked_number','string',1,5,'2025-03-01T12:15:00Z','masked_number',1);
INSERT INTO card_fields VALUES('card_number','string',1,5,'2025-03-01T12:15:00Z','card_number',1);
INSERT INTO card_fields VALUES('brand','string',1,5,'2025-03-01T12:15:00Z','brand',1);
INSERT INTO card_fields VALUES('status','string',1,6,'2025-03-01T12:15:00Z','status',1);
INSERT INTO card_fields VALUES('balance','string',1,6,'2025-03-01T12:15:00Z','balance',1);
INSERT INTO card_fields VALUES('currency','string',1,5,'2025-03-01T12:15:00Z','currency',1);
INSERT INTO card_fields VALUES('holder','object',1,5,'2025-03-01T12:15:00Z','holder',1);
INSERT INTO card_fields VALUES('label','null,string',1,5,'2025-03-01T12:15:00Z','label',1);
INSERT INTO card_fields VALUES('expiry_month','number',1,5,'2025-03-01T12:15:00Z','expiry_month',1);
INSERT INTO card_fields VALUES('expiry_year','number',1,5,'2025-03-01T12:15:00Z','expiry_year',1);
INSERT INTO card_fields VALUES('purpose','array',1,5,'2025-03-01T12:15:00Z','purpose',1);
INSERT INTO card_fields VALUES('spend_controls','object',1,5,'2025-03-01T12:15:00Z','spend_controls',1);
INSERT INTO card_fields VALUES('risk_score','number',1,5,'2025-03-01T12:15:00Z','risk_score',1);
INSERT INTO card_fields VALUES('metadata','object',1,5,'2025-03-01T12:15:00Z','metadata',1);
INSERT INTO card_fields VALUES('created_at','string',1,5,'2025-03-01T12:15:00Z','created_at',1);
INSERT INTO card_fields VALUES('updated_at','string',1,5,'2025-03-01T12:15:00Z','updated_at',1);
INSERT INTO card_fields VALUES('note','string',6,6,'2025-03-01T13:30:00Z','note',1);
INSERT INTO card_fields VALUES('café','string',6,6,'2025-03-01T13:30:00Z','café',1);
INSERT INTO card_fields VALUES('url','string',6,6,'2025-03-01T13:30:00Z','url',1);
INSERT INTO card_fields VALUES('ref','string',6,6,'2025-03-01T13:30:00Z','ref',1);
INSERT INTO card_fields VALUES('reference_no','number',6,6,'2025-03-01T13:30:00Z','reference_no',1);
INSERT INTO card_fields VALUES('created_ms','number',6,6,'2025-03-01T13:30:00Z','created_ms',1);
INSERT INTO card_fields VALUES('by_number','object',6,6,'2025-03-01T13:30:00Z','by_number',1);
INSERT INTO card_fields VALUES('Status','string',6,6,'2025-03-01T13:30:00Z','Status_2',1);
CREATE TABLE account_snapshots (
    snapshot_id                      INTEGER PRIMARY KEY,
    run_id                           INTEGER NOT NULL REFERENCES sync_runs (run_id),
    taken_at                         TEXT    NOT NULL,
    name                             TEXT,
    email                            TEXT,
    timezone                         TEXT,
    transfer_amount_minor            INTEGER,
    reach_amount_minor               INTEGER,
    authorizations_minor             INTEGER,
    balance_minor                    INTEGER,
    cards_balance_minor              INTEGER,
    available_recharge_balance_minor INTEGER,
    available_to_apply_card_count    INTEGER,
    applied_card_count               INTEGER,
    raw                              TEXT CHECK (raw IS NULL OR json_valid(raw))
, amounts_rounded INTEGER NOT NULL DEFAULT 0
    CHECK (amounts_rounded IN (0, 1))) STRICT;
INSERT INTO account_snapshots VALUES(1,1,'2025-03-01T12:15:00Z','Acme Growth Ltd','demo@example.com','Asia/Shanghai',12500000,12375000,NULL,9876540,-1207,1234567890123456,42,40,'{"name":"Acme Growth Ltd","email":"demo@example.com","timezone":"Asia/Shanghai","transfer_amount":"125000.00","reach_amount":"123750.00","authorizations":null,"balance":98765.4,"cards_balance":"-12.07","available_recharge_balance":12345678901234.56,"available_to_apply_card_count":42,"applied_card_count":40}',0);
INSERT INTO account_snapshots VALUES(2,2,'2025-03-01T12:30:00Z','Acme Growth Ltd','demo@example.com','Asia/Shanghai',12500000,12375000,NULL,9876540,-1207,1234567890123456,42,40,'{"name":"Acme Growth Ltd","email":"demo@example.com","timezone":"Asia/Shanghai","transfer_amount":"125000.00","reach_amount":"123750.00","authorizations":null,"balance":98765.4,"cards_balance":"-12.07","available_recharge_balance":12345678901234.56,"available_to_apply_card_count":42,"applied_card_count":40}',0);
INSERT INTO account_snapshots VALUES(3,3,'2025-03-01T12:45:00Z','Acme Growth Ltd','demo@example.com','Asia/Shanghai',12500000,12375000,NULL,9880015,-1207,1234567890123456,42,40,'{"name":"Acme Growth Ltd","email":"demo@example.com","timezone":"Asia/Shanghai","transfer_amount":"125000.00","reach_amount":"123750.00","authorizations":null,"balance":98800.15,"cards_balance":"-12.07","available_recharge_balance":12345678901234.56,"available_to_apply_card_count":42,"applied_card_count":40}',0);
INSERT INTO account_snapshots VALUES(4,5,'2025-03-01T13:15:00Z','Acme Growth Ltd','demo@example.com','Asia/Shanghai',12500000,12375000,NULL,9880015,-1207,1234567890123456,42,40,'{"name":"Acme Growth Ltd","email":"demo@example.com","timezone":"Asia/Shanghai","transfer_amount":"125000.00","reach_amount":"123750.00","authorizations":null,"balance":98800.15,"cards_balance":"-12.07","available_recharge_balance":12345678901234.56,"available_to_apply_card_count":42,"applied_card_count":40}',0);
CREATE TABLE sync_checkpoints (
    stream      TEXT    PRIMARY KEY,
    run_id      INTEGER REFERENCES sync_runs (run_id),
    next_page   INTEGER NOT NULL DEFAULT 1,
    total_pages INTEGER NOT NULL DEFAULT 0,
    total_items INTEGER NOT NULL DEFAULT 0,
    updated_at  TEXT    NOT NULL
) STRICT;
INSERT INTO sync_checkpoints VALUES('cards',5,1,3,40,'2025-03-01T13:15:00Z');
INSERT INTO sync_checkpoints VALUES('odd',6,1,1,4,'2025-03-01T13:30:00Z');
CREATE TABLE sync_walks (
    walk_id       INTEGER PRIMARY KEY,
    stream        TEXT    NOT NULL,
    started_at    TEXT    NOT NULL,
    started_run   INTEGER NOT NULL REFERENCES sync_runs (run_id),
    finished_at   TEXT,
    finished_run  INTEGER REFERENCES sync_runs (run_id),
    first_total   INTEGER NOT NULL,
    last_total    INTEGER NOT NULL,
    pages         INTEGER NOT NULL DEFAULT 0,
    distinct_ids  INTEGER NOT NULL DEFAULT 0,
    duplicate_ids INTEGER NOT NULL DEFAULT 0,
    removed       INTEGER NOT NULL DEFAULT 0,
    outcome       TEXT CHECK (outcome IN ('complete', 'inconsistent', 'reset')),
    pending_removals INTEGER NOT NULL DEFAULT 0
, last_page INTEGER NOT NULL DEFAULT 0, runs INTEGER NOT NULL DEFAULT 0, last_run INTEGER REFERENCES sync_runs (run_id), total_changed INTEGER NOT NULL DEFAULT 0
    CHECK (total_changed IN (0, 1)), walks INTEGER NOT NULL DEFAULT 1
    CHECK (walks >= 1), min_total INTEGER, max_total INTEGER) STRICT;
INSERT INTO sync_walks VALUES(1,'cards','2025-03-01T12:15:00Z',1,'2025-03-01T12:15:00Z',1,40,40,3,40,0,0,'complete',0,3,1,1,0,1,40,40);
INSERT INTO sync_walks VALUES(2,'cards','2025-03-01T12:30:00Z',2,'2025-03-01T12:30:00Z',2,40,40,3,40,0,0,'complete',1,3,1,2,0,1,40,40);
INSERT INTO sync_walks VALUES(3,'cards','2025-03-01T12:45:00Z',3,'2025-03-01T12:45:00Z',3,40,40,3,40,0,1,'complete',0,3,1,3,0,1,40,40);
INSERT INTO sync_walks VALUES(4,'cards','2025-03-01T13:15:00Z',5,'2025-03-01T13:15:00Z',5,40,40,3,40,0,0,'complete',0,3,1,5,0,1,40,40);
INSERT INTO sync_walks VALUES(5,'odd','2025-03-01T13:30:00Z',6,'2025-03-01T13:30:00Z',6,4,4,1,4,0,0,'inconsistent',0,1,1,6,0,1,4,4);
CREATE TABLE removal_pending (
    card_id   TEXT    PRIMARY KEY REFERENCES "card_state" (card_id),
    walk_id   INTEGER NOT NULL REFERENCES sync_walks (walk_id),
    missed_at TEXT    NOT NULL
) STRICT;
CREATE TABLE run_pages (
    run_id      INTEGER NOT NULL REFERENCES sync_runs (run_id),
    stream      TEXT    NOT NULL,
    page        INTEGER NOT NULL,
    walk_id     INTEGER REFERENCES sync_walks (walk_id),
    fetched_at  TEXT    NOT NULL,
    committed_at TEXT   NOT NULL,
    items       INTEGER NOT NULL,
    total_items INTEGER NOT NULL,
    total_pages INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL,
    body_sha256 TEXT    NOT NULL,
    cards_new       INTEGER NOT NULL,
    cards_changed   INTEGER NOT NULL,
    cards_unchanged INTEGER NOT NULL,
    PRIMARY KEY (run_id, stream, page)
) STRICT;
INSERT INTO run_pages VALUES(1,'cards',1,1,'2025-03-01T12:15:00Z','2025-03-01T12:15:00Z',15,40,3,0,'06897a2e090a356fa220e95363a323bf703c4289bdcb9bd379019aa7a2541ee2',15,0,0);
INSERT INTO run_pages VALUES(1,'cards',2,1,'2025-03-01T12:15:00Z','2025-03-01T12:15:00Z',15,40,3,0,'6eceeafce58bd02e1d578e43075cceb23b166fcf02f3ff2928e7d353f72f7ac4',15,0,0);
INSERT INTO run_pages VALUES(1,'cards',3,1,'2025-03-01T12:15:00Z','2025-03-01T12:15:00Z',10,40,3,0,'cd97e6f1855160413716ee2cb100ee56383539c6de4c7600b0b41a4f70626838',10,0,0);
INSERT INTO run_pages VALUES(2,'cards',1,2,'2025-03-01T12:30:00Z','2025-03-01T12:30:00Z',15,40,3,0,'d027ffebb7e272c98dd2acdc367951a534f45769500280398aa3bc1bc06000f0',0,1,14);
INSERT INTO run_pages VALUES(2,'cards',2,2,'2025-03-01T12:30:00Z','2025-03-01T12:30:00Z',15,40,3,0,'74e03f9e33165ecbaffd5bfb1ece215dc639b2c22e6704f76246015716e5e412',0,0,15);
INSERT INTO run_pages VALUES(2,'cards',3,2,'2025-03-01T12:30:00Z','2025-03-01T12:30:00Z',10,40,3,0,'0337bbbba036dfb923fe2bce6339802c73c4447db4ddf35ea16ecfb381b7b082',1,0,9);
INSERT INTO run_pages VALUES(3,'cards',1,3,'2025-03-01T12:45:00Z','2025-03-01T12:45:00Z',15,40,3,0,'d027ffebb7e272c98dd2acdc367951a534f45769500280398aa3bc1bc06000f0',0,0,15);
INSERT INTO run_pages VALUES(3,'cards',2,3,'2025-03-01T12:45:00Z','2025-03-01T12:45:00Z',15,40,3,0,'74e03f9e33165ecbaffd5bfb1ece215dc639b2c22e6704f76246015716e5e412',0,0,15);
INSERT INTO run_pages VALUES(3,'cards',3,3,'2025-03-01T12:45:00Z','2025-03-01T12:45:00Z',10,40,3,0,'0337bbbba036dfb923fe2bce6339802c73c4447db4ddf35ea16ecfb381b7b082',0,0,10);
INSERT INTO run_pages VALUES(5,'cards',1,4,'2025-03-01T13:15:00Z','2025-03-01T13:15:00Z',15,40,3,0,'eaeba52980df019f936953ff0b9f45b1545f8a9b3a6e1061772fdca9fe410ee2',0,1,14);
INSERT INTO run_pages VALUES(5,'cards',2,4,'2025-03-01T13:15:00Z','2025-03-01T13:15:00Z',15,40,3,0,'74e03f9e33165ecbaffd5bfb1ece215dc639b2c22e6704f76246015716e5e412',0,0,15);
INSERT INTO run_pages VALUES(5,'cards',3,4,'2025-03-01T13:15:00Z','2025-03-01T13:15:00Z',10,40,3,0,'0337bbbba036dfb923fe2bce6339802c73c4447db4ddf35ea16ecfb381b7b082',0,0,10);
INSERT INTO run_pages VALUES(6,'odd',1,5,'2025-03-01T13:30:00Z','2025-03-01T13:30:00Z',4,4,1,0,'00',4,0,0);
ANALYZE sqlite_schema;
INSERT INTO sqlite_stat1 VALUES('sync_walks','sync_walks_open','0 0');
INSERT INTO sqlite_stat1 VALUES('sync_walks',NULL,'1');
INSERT INTO sqlite_stat1 VALUES('account_snapshots','account_snapshots_taken','1 1');
INSERT INTO sqlite_stat1 VALUES('card_fields','sqlite_autoindex_card_fields_1','17 1');
INSERT INTO sqlite_stat1 VALUES('run_pages','run_pages_walk','3 3 1');
INSERT INTO sqlite_stat1 VALUES('run_pages','sqlite_autoindex_run_pages_1','3 3 3 1');
INSERT INTO sqlite_stat1 VALUES('sync_runs','sync_runs_status','1 1 1');
INSERT INTO sqlite_stat1 VALUES('cards','sqlite_autoindex_cards_1','40 1');
INSERT INTO sqlite_stat1 VALUES('sync_checkpoints','sqlite_autoindex_sync_checkpoints_1','1 1');
INSERT INTO sqlite_stat1 VALUES('card_versions','card_versions_run','40 40');
INSERT INTO sqlite_stat1 VALUES('card_versions','card_versions_current','40 1');
INSERT INTO sqlite_stat1 VALUES('card_versions','card_versions','40 1 1');
INSERT INTO sqlite_stat1 VALUES('removal_pending','sqlite_autoindex_removal_pending_1','1 1');
INSERT INTO sqlite_stat1 VALUES('column_docs','column_docs','183 12 1');
INSERT INTO sqlite_stat1 VALUES('card_state','sqlite_autoindex_card_state_1','45 1');
ANALYZE sqlite_schema;
CREATE TABLE rejected_cards (
    rejected_id      INTEGER PRIMARY KEY,
    run_id           INTEGER NOT NULL REFERENCES sync_runs (run_id),
    page             INTEGER NOT NULL,
    card_id          TEXT,
    reason           TEXT    NOT NULL,
    data             TEXT    NOT NULL,
    rejected_at      TEXT    NOT NULL,
    last_run_id      INTEGER NOT NULL REFERENCES sync_runs (run_id),
    last_rejected_at TEXT    NOT NULL,
    times            INTEGER NOT NULL DEFAULT 1,
    data_sha256      TEXT    NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS "walk_seen" (
    walk_id INTEGER NOT NULL REFERENCES sync_walks (walk_id),
    page    INTEGER NOT NULL,
    run_id  INTEGER NOT NULL,
    ids     TEXT    NOT NULL CHECK (json_valid(ids)),
    PRIMARY KEY (walk_id, page)
) STRICT, WITHOUT ROWID;
CREATE TABLE column_docs (
    table_name  TEXT NOT NULL,
    column_name TEXT NOT NULL,
    description TEXT NOT NULL,
    unit        TEXT,
    PRIMARY KEY (table_name, column_name)
) STRICT, WITHOUT ROWID;
INSERT INTO column_docs VALUES('account_balance_changes','account','The API account the snapshot belongs to (schema 5): ''default'' for a single account (the config''s [api] table) and for every row stored before; otherwise the name of its [[accounts]] table.',NULL);
INSERT INTO column_docs VALUES('account_balance_changes','amount','Which amount moved: transfer_amount, reach_amount, authorizations, balance, cards_balance or available_recharge_balance.',NULL);
INSERT INTO column_docs VALUES('account_balance_changes','change','The change as exact decimal text.','currency units');
INSERT INTO column_docs VALUES('account_balance_changes','change_minor','new_minor - old_minor; NULL when either is NULL.','cents');
INSERT INTO column_docs VALUES('account_balance_changes','new_minor','The new value in cents.','cents');
INSERT INTO column_docs VALUES('account_balance_changes','new_value','The new value as exact decimal text.','currency units');
INSERT INTO column_docs VALUES('account_balance_changes','old_minor','The previous value in cents.','cents');
INSERT INTO column_docs VALUES('account_balance_changes','old_value','The previous value as exact decimal text.','currency units');
INSERT INTO column_docs VALUES('account_balance_changes','previous_snapshot_id','The snapshot before it; NULL for the first.',NULL);
INSERT INTO column_docs VALUES('account_balance_changes','previous_taken_at','When that one was taken (UTC text YYYY-MM-DDTHH:MM:SSZ).',NULL);
INSERT INTO column_docs VALUES('account_balance_changes','run_id','Its run.',NULL);
INSERT INTO column_docs VALUES('account_balance_changes','snapshot_id','The snapshot with the new value.',NULL);
INSERT INTO column_docs VALUES('account_balance_changes','taken_at','When it was taken (UTC text YYYY-MM-DDTHH:MM:SSZ).',NULL);
INSERT INTO column_docs VALUES('account_balances','account','The API account the snapshot belongs to (schema 5): ''default'' for a single account (the config''s [api] table) and for every row stored before; otherwise the name of its [[accounts]] table.',NULL);
INSERT INTO column_docs VALUES('account_balances','applied_card_count','How many cards the account has applied for.',NULL);
INSERT INTO column_docs VALUES('account_balances','authorizations','authorizations as exact decimal text.','currency units');
INSERT INTO column_docs VALUES('account_balances','available_recharge_balance','available_recharge_balance as exact decimal text.','currency units');
INSERT INTO column_docs VALUES('account_balances','available_to_apply_card_count','How many more cards the account may apply for.',NULL);
INSERT INTO column_docs VALUES('account_balances','balance','balance as exact decimal text.','currency units');
INSERT INTO column_docs VALUES('account_balances','cards_balance','cards_balance as exact decimal text.','currency units');
INSERT INTO column_docs VALUES('account_balances','email','The account''s email.',NULL);
INSERT INTO column_docs VALUES('account_balances','name','The account''s name.',NULL);
INSERT INTO column_docs VALUES('account_balances','reach_amount','reach_amount as exact decimal text.','currency units');
INSERT INTO column_docs VALUES('account_balances','run_id','The run that read the account.',NULL);
INSERT INTO column_docs VALUES('account_balances','snapshot_id','account_snapshots.snapshot_id.',NULL);
INSERT INTO column_docs VALUES('account_balances','taken_at','When the account was read (UTC text YYYY-MM-DDTHH:MM:SSZ).',NULL);
INSERT INTO column_docs VALUES('account_balances','timezone','The account''s time zone.',NULL);
INSERT INTO column_docs VALUES('account_balances','transfer_amount','transfer_amount as exact decimal text.','currency units');
INSERT INTO column_docs VALUES('account_snapshots','account','The API account the snapshot belongs to (schema 5): ''default'' for a single account (the config''s [api] table) and for every row stored before; otherwise the name of its [[accounts]] table.',NULL);
INSERT INTO column_docs VALUES('account_snapshots','amounts_rounded','1 when an amount had more decimals than api.amount_scale (float noise such as 1234.5600000000002) and was rounded half to even; raw keeps the exact text.',NULL);
INSERT INTO column_docs VALUES('account_snapshots','applied_card_count','How many cards the account has applied for.',NULL);
INSERT INTO column_docs VALUES('account_snapshots','authorizations_minor','authorizations (amount held by pending authorizations) in cents; NULL when the API sent null.','cents');
INSERT INTO column_docs VALUES('account_snapshots','available_recharge_balance_minor','available_recharge_balance in cents; NULL when the API sent null.','cents');
INSERT INTO column_docs VALUES('account_snapshots','available_to_apply_card_count','How many more cards the account may apply for.',NULL);
INSERT INTO column_docs VALUES('account_snapshots','balance_minor','balance in cents; NULL when the API sent null.','cents');
INSERT INTO column_docs VALUES('account_snapshots','cards_balance_minor','cards_balance (money loaded on cards) in cents; NULL when the API sent null.','cents');
INSERT INTO column_docs VALUES('account_snapshots','email','The account''s email as the API sent it.',NULL);
INSERT INTO column_docs VALUES('account_snapshots','name','The account''s name as the API sent it.',NULL);
INSERT INTO column_docs VALUES('account_snapshots','raw','The account JSON as received, redacted (it keeps the exact text of rounded amounts).',NULL);
INSERT INTO column_docs VALUES('account_snapshots','reach_amount_minor','reach_amount in cents; NULL when the API sent null.','cents');
INSERT INTO column_docs VALUES('account_snapshots','run_id','The run that read the account.',NULL);
INSERT INTO column_docs VALUES('account_snapshots','snapshot_id','Identifies the snapshot.',NULL);
INSERT INTO column_docs VALUES('account_snapshots','taken_at','When the account was read (UTC text YYYY-MM-DDTHH:MM:SSZ).',NULL);
INSERT INTO column_docs VALUES('account_snapshots','timezone','The account''s time zone as the API sent it.',NULL);
INSERT INTO column_docs VALUES('account_snapshots','transfer_amount_minor','transfer_amount in cents; NULL when the API sent null.','cents');
INSERT INTO column_docs VALUES('card_fields','column_name','The field''s column in cards_flat (unique case-insensitively; a clash gets a _2 suffix).',NULL);
INSERT INTO column_docs VALUES('card_fields','first_run','The run that first saw the field.',NULL);
INSERT INTO column_docs VALUES('card_fields','first_seen_at','When the field was first seen (UTC text YYYY-MM-DDTHH:MM:SSZ).',NULL);
INSERT INTO column_docs VALUES('card_fields','in_flat_view','1 when the field is a column of cards_flat; 0 once the view holds its 1,900 fields (the field stays in data).',NULL);
INSERT INTO column_docs VALUES('card_fields','json_types','The JSON types seen, comma-separated and sorted (array, boolean, null, number, object, string).',NULL);
INSERT INTO column_docs VALUES('card_fields','last_run','The last run that stored a card with the field.',NULL);
INSERT INTO column_docs VALUES('card_fields','name','The field name as sent (after masking card numbers in it).',NULL);
INSERT INTO column_docs VALUES('card_versions','account','The API account the card belongs to (schema 5): ''default'' for a single account (the config''s [api] table) and for every row stored before; otherwise the name of its [[accounts]] table. A card id is unique within its account.',NULL);
INSERT INTO column_docs VALUES('card_versions','card_id','The card (cards.card_id).',NULL);
INSERT INTO column_docs VALUES('card_versions','change','Why the row exists: new, changed, removed or returned.',NULL);
INSERT INTO column_docs VALUES('card_versions','data','The card''s redacted JSON as of this version.',NULL);
INSERT INTO column_docs VALUES('card_versions','run_id','The run that stored this version (sync_runs.run_id).',NULL);
INSERT INTO column_docs VALUES('card_versions','valid_from','When this version was stored (UTC text YYYY-MM-DDTHH:MM:SSZ).',NULL);
INSERT INTO column_docs VALUES('card_versions','valid_to','When the next version replaced it; NULL for the current version (UTC text YYYY-MM-DDTHH:MM:SSZ).',NULL);
INSERT INTO column_docs VALUES('card_versions','version','1 for the first row of a card, then 2, 3, …',NULL);
INSERT INTO column_docs VALUES('cards','account','The API account the card belongs to (schema 5): ''default'' for a single account (the config''s [api] table) and for every row stored before; otherwise the name of its [[accounts]] table. A card id is unique within its account.',NULL);
INSERT INTO column_docs VALUES('cards','card_id','The API''s card id, as text (integers and strings alike).',NULL);
INSERT INTO column_docs VALUES('cards','data','The card''s latest JSON after redaction (card numbers masked to first 6 + last 4 digits, cvv/pin fields dropped), canonical.',NULL);
INSERT INTO column_docs VALUES('cards','first_seen_at','When the card was first stored (UTC text YYYY-MM-DDTHH:MM:SSZ).',NULL);
INSERT INTO column_docs VALUES('cards','first_seen_run','sync_runs.run_id of the run that first stored the card.',NULL);
INSERT INTO column_docs VALUES('cards','last_seen_at','When the last complete walk that listed the card finished (UTC text YYYY-MM-DDTHH:MM:SSZ); see the README.',NULL);
INSERT INTO column_docs VALUES('cards','last_seen_run','sync_runs.run_id of the last complete walk''s run that listed the card.',NULL);
INSERT INTO column_docs VALUES('cards','removed_at','When the card was marked removed (missed by two consecutive complete, consistent walks); NULL while listed (UTC text YYYY-MM-DDTHH:MM:SSZ).',NULL);
INSERT INTO column_docs VALUES('cards','updated_at','When data last changed (UTC text YYYY-MM-DDTHH:MM:SSZ).',NULL);
INSERT INTO column_docs VALUES('cards_current','account','The API account the card belongs to (schema 5): ''default'' for a single account (the config''s [api] table) and for every row stored before; otherwise the name of its [[accounts]] table. A card id is unique within its account.',NULL);
INSERT INTO column_docs VALUES('cards_current','card_id','The API''s card id, as text.',NULL);
INSERT INTO column_docs VALUES('cards_current','data','The card''s latest redacted JSON.',NULL);
INSERT INTO column_docs VALUES('cards_current','first_seen_at','When the card was first stored (UTC text YYYY-MM-DDTHH:MM:SSZ).',NULL);
INSERT INTO column_docs VALUES('cards_current','first_seen_run','The run that first stored it.',NULL);
INSERT INTO column_docs VALUES('cards_current','last_seen_at','When the last complete walk that listed it finished (UTC text YYYY-MM-DDTHH:MM:SSZ).',NULL);
INSERT INTO column_docs VALUES('cards_current','last_seen_run','The last complete walk''s run that listed it.',NULL);
INSERT INTO column_docs VALUES('cards_current','updated_at','When data last changed (UTC text YYYY-MM-DDTHH:MM:SSZ).',NULL);
INSERT INTO column_docs VALUES('cards_flat','account','The API account the card belongs to (schema 5): ''default'' for a single account (the config''s [api] table) and for every row stored before; otherwise the name of its [[accounts]] table. A card id is unique within its account.',NULL);
INSERT INTO column_docs VALUES('cards_flat','card_id','The API''s card id, as text.',NULL);
INSERT INTO column_docs VALUES('cards_flat','removed_at','When the card was marked removed; NULL while listed (UTC text YYYY-MM-DDTHH:MM:SSZ).',NULL);
INSERT INTO column_docs VALUES('column_docs','column_name','The column.',NULL);
INSERT INTO column_docs VALUES('column_docs','description','What it means.',NULL);
INSERT INTO column_docs VALUES('column_docs','table_name','The table or view.',NULL);
INSERT INTO column_docs VALUES('column_docs','unit','Its unit (cents, currency units, seconds, milliseconds, bytes); NULL when it has none.',NULL);
INSERT INTO column_docs VALUES('rejected_cards','account','The API account the rejected item belongs to (schema 5): ''default'' for a single account (the config''s [api] table) and for every row stored before; otherwise the name of its [[accounts]] table.',NULL);
INSERT INTO column_docs VALUES('rejected_cards','card_id','The item''s id when one could be read; NULL otherwise.',NULL);
INSERT INTO column_docs VALUES('rejected_cards','data','The item after redaction, at most 64 KiB.',NULL);
INSERT INTO column_docs VALUES('rejected_cards','data_sha256','SHA-256 of data (hex): repeats of the same item update this row.',NULL);
INSERT INTO column_docs VALUES('rejected_cards','last_rejected_at','When it was last set aside (UTC text YYYY-MM-DDTHH:MM:SSZ).',NULL);
INSERT INTO column_docs VALUES('rejected_cards','last_run_id','The last run that set it aside.',NULL);
INSERT INTO column_docs VALUES('rejected_cards','page','The page it was on (the latest time).',NULL);
INSERT INTO column_docs VALUES('rejected_cards','reason','Why the item could not be stored.',NULL);
INSERT INTO column_docs VALUES('rejected_cards','rejected_at','When it was first set aside (UTC text YYYY-MM-DDTHH:MM:SSZ).',NULL);
INSERT INTO column_docs VALUES('rejected_cards','rejected_id','Identifies the rejection.',NULL);
INSERT INTO column_docs VALUES('rejected_cards','run_id','The run that first set the item aside.',NULL);
INSERT INTO column_docs VALUES('rejected_cards','times','How many times it was set aside.',NULL);
INSERT INTO column_docs VALUES('removal_pending','account','The API account the card belongs to (schema 5): ''default'' for a single account (the config''s [api] table) and for every row stored before; otherwise the name of its [[accounts]] table. A card id is unique within its account.',NULL);
INSERT INTO column_docs VALUES('removal_pending','card_id','The card (cards.card_id).',NULL);
INSERT INTO column_docs VALUES('removal_pending','missed_at','When that walk missed it (UTC text YYYY-MM-DDTHH:MM:SSZ).',NULL);
INSERT INTO column_docs VALUES('removal_pending','walk_id','The walk that missed it (sync_walks.walk_id).',NULL);
INSERT INTO column_docs VALUES('run_pages','body_sha256','SHA-256 of the response body (hex).',NULL);
INSERT INTO column_docs VALUES('run_pages','cards_changed','Changed cards on the page.',NULL);
INSERT INTO column_docs VALUES('run_pages','cards_new','New cards on the page.',NULL);
INSERT INTO column_docs VALUES('run_pages','cards_unchanged','Unchanged cards on the page.',NULL);
INSERT INTO column_docs VALUES('run_pages','committed_at','When it was committed (UTC text YYYY-MM-DDTHH:MM:SSZ).',NULL);
INSERT INTO column_docs VALUES('run_pages','duration_ms','How long the page request took.','milliseconds');
INSERT INTO column_docs VALUES('run_pages','fetched_at','When the page was fetched (UTC text YYYY-MM-DDTHH:MM:SSZ).',NULL);
INSERT INTO column_docs VALUES('run_pages','items','Items on the page.',NULL);
INSERT INTO column_docs VALUES('run_pages','page','The page number.',NULL);
INSERT INTO column_docs VALUES('run_pages','run_id','The run that committed the page.',NULL);
INSERT INTO column_docs VALUES('run_pages','stream','The stream: cards.',NULL);
INSERT INTO column_docs VALUES('run_pages','total_items','The total the page reported.',NULL);
INSERT INTO column_docs VALUES('run_pages','total_pages','total_pages the page reported.',NULL);
INSERT INTO column_docs VALUES('run_pages','walk_id','The walk the page belongs to.',NULL);
INSERT INTO column_docs VALUES('sync_checkpoints','account','The API account the checkpoint belongs to (schema 5): ''default'' for a single account (the config''s [api] table) and for every row stored before; otherwise the name of its [[accounts]] table.',NULL);
INSERT INTO column_docs VALUES('sync_checkpoints','next_page','The page the next run requests first; 1 = the start of a walk.',NULL);
INSERT INTO column_docs VALUES('sync_checkpoints','run_id','The run that last moved the checkpoint.',NULL);
INSERT INTO column_docs VALUES('sync_checkpoints','stream','The stream: cards.',NULL);
INSERT INTO column_docs VALUES('sync_checkpoints','total_items','total (items) the last page reported.',NULL);
INSERT INTO column_docs VALUES('sync_checkpoints','total_pages','total_pages the last page reported.',NULL);
INSERT INTO column_docs VALUES('sync_checkpoints','updated_at','When the checkpoint last moved (UTC text YYYY-MM-DDTHH:MM:SSZ).',NULL);
INSERT INTO column_docs VALUES('sync_health','account','The API account the row belongs to (schema 5): ''default'' for a single account (the config''s [api] table) and for every row stored before; otherwise the name of its [[accounts]] table.',NULL);
INSERT INTO column_docs VALUES('sync_health','current_cards','Cards the API currently lists.',NULL);
INSERT INTO column_docs VALUES('sync_health','failures_in_a_row','Failed and abandoned runs since the last success (an interrupted run is not a failure).',NULL);
INSERT INTO column_docs VALUES('sync_health','last_account_error','Why the latest run took no account snapshot; NULL when it took one.',NULL);
INSERT INTO column_docs VALUES('sync_health','last_cards_rejected','Items the latest run set aside.',NULL);
INSERT INTO column_docs VALUES('sync_health','last_removals_held','Cards the latest run''s guard held back.',NULL);
INSERT INTO column_docs VALUES('sync_health','last_run','The latest run.',NULL);
INSERT INTO column_docs VALUES('sync_health','last_snapshot_age_seconds','How long ago that was.','seconds');
INSERT INTO column_docs VALUES('sync_health','last_snapshot_at','When the latest account snapshot was taken (UTC text YYYY-MM-DDTHH:MM:SSZ).',NULL);
INSERT INTO column_docs VALUES('sync_health','last_started_at','When it started (UTC text YYYY-MM-DDTHH:MM:SSZ).',NULL);
INSERT INTO column_docs VALUES('sync_health','last_status','Its status.',NULL);
INSERT INTO column_docs VALUES('sync_health','last_success_age_seconds','How long ago that was.','seconds');
INSERT INTO column_docs VALUES('sync_health','last_success_at','When it finished (UTC text YYYY-MM-DDTHH:MM:SSZ).',NULL);
INSERT INTO column_docs VALUES('sync_health','last_success_run','The last run that succeeded.',NULL);
INSERT INTO column_docs VALUES('sync_health','last_walk_consistent','1 when the last finished walk was consistent, 0 when not, NULL before any.',NULL);
INSERT INTO column_docs VALUES('sync_health','pending_removals','Cards awaiting confirmation of their removal.',NULL);
INSERT INTO column_docs VALUES('sync_health','running','Runs marked running.',NULL);
INSERT INTO column_docs VALUES('sync_runs','account','The API account the run belongs to (schema 5): ''default'' for a single account (the config''s [api] table) and for every row stored before; otherwise the name of its [[accounts]] table.',NULL);
INSERT INTO column_docs VALUES('sync_runs','account_error','Why the run took no account snapshot; NULL when it took one.',NULL);
INSERT INTO column_docs VALUES('sync_runs','auth_requests','Token requests.',NULL);
INSERT INTO column_docs VALUES('sync_runs','cards_changed','Cards whose content changed.',NULL);
INSERT INTO column_docs VALUES('sync_runs','cards_new','Cards stored for the first time.',NULL);
INSERT INTO column_docs VALUES('sync_runs','cards_rejected','Items of this run''s pages set aside in rejected_cards.',NULL);
INSERT INTO column_docs VALUES('sync_runs','cards_removed','Cards the run marked removed.',NULL);
INSERT INTO column_docs VALUES('sync_runs','cards_seen','Cards listed on those pages.',NULL);
INSERT INTO column_docs VALUES('sync_runs','cards_unchanged','Cards listed with the content already stored.',NULL);
INSERT INTO column_docs VALUES('sync_runs','error','The full error of a failed run (secrets scrubbed, card numbers masked); NULL otherwise.',NULL);
INSERT INTO column_docs VALUES('sync_runs','finished_at','When the run ended; NULL while running (UTC text YYYY-MM-DDTHH:MM:SSZ).',NULL);
INSERT INTO column_docs VALUES('sync_runs','heartbeat_at','The run''s last sign of life (UTC text YYYY-MM-DDTHH:MM:SSZ).',NULL);
INSERT INTO column_docs VALUES('sync_runs','pages','Card pages committed by the run.',NULL);
INSERT INTO column_docs VALUES('sync_runs','rate_limited','429 Too Many Requests answers received.',NULL);
INSERT INTO column_docs VALUES('sync_runs','removals_held','Cards the mass-removal guard kept from removal (see warehouse.max_removed_fraction).',NULL);
INSERT INTO column_docs VALUES('sync_runs','requests','HTTP requests the run made, token requests included.',NULL);
INSERT INTO column_docs VALUES('sync_runs','retries','Requests retried (429, 5xx, network errors).',NULL);
INSERT INTO column_docs VALUES('sync_runs','run_id','Identifies the run; runs are numbered in start order.',NULL);
INSERT INTO column_docs VALUES('sync_runs','started_at','When the run started (UTC text YYYY-MM-DDTHH:MM:SSZ).',NULL);
INSERT INTO column_docs VALUES('sync_runs','status','running, succeeded, failed, interrupted (SIGTERM, Ctrl-C) or abandoned (its process died).',NULL);
INSERT INTO column_docs VALUES('sync_runs','trigger','What started the run: schedule, backfill or demo.',NULL);
INSERT INTO column_docs VALUES('sync_runs','version','The cardsync version that ran.',NULL);
INSERT INTO column_docs VALUES('sync_runs','walk_consistent','1 when the walk that ended in this run was consistent (counts and ids agreed), 0 when not, NULL when no walk ended.',NULL);
INSERT INTO column_docs VALUES('sync_walks','account','The API account the walk belongs to (schema 5): ''default'' for a single account (the config''s [api] table) and for every row stored before; otherwise the name of its [[accounts]] table.',NULL);
INSERT INTO column_docs VALUES('sync_walks','distinct_ids','Distinct card ids listed.',NULL);
INSERT INTO column_docs VALUES('sync_walks','duplicate_ids','Ids listed on more than one page.',NULL);
INSERT INTO column_docs VALUES('sync_walks','finished_at','When the walk ended; NULL while open (UTC text YYYY-MM-DDTHH:MM:SSZ).',NULL);
INSERT INTO column_docs VALUES('sync_walks','finished_run','The run that ended it.',NULL);
INSERT INTO column_docs VALUES('sync_walks','first_total','The total the walk''s first page reported.',NULL);
INSERT INTO column_docs VALUES('sync_walks','last_page','The highest page committed.',NULL);
INSERT INTO column_docs VALUES('sync_walks','last_run','The latest of them.',NULL);
INSERT INTO column_docs VALUES('sync_walks','last_total','The total its latest page reported.',NULL);
INSERT INTO column_docs VALUES('sync_walks','max_total','The largest total any page reported.',NULL);
INSERT INTO column_docs VALUES('sync_walks','min_total','The smallest total any page reported.',NULL);
INSERT INTO column_docs VALUES('sync_walks','outcome','complete, inconsistent or reset (abandoned by -restart); NULL while open.',NULL);
INSERT INTO column_docs VALUES('sync_walks','pages','Distinct pages committed.',NULL);
INSERT INTO column_docs VALUES('sync_walks','pending_removals','Cards awaiting confirmation of their removal when the walk closed.',NULL);
INSERT INTO column_docs VALUES('sync_walks','removed','Cards the walk confirmed removed.',NULL);
INSERT INTO column_docs VALUES('sync_walks','runs','Runs that committed pages to the walk.',NULL);
INSERT INTO column_docs VALUES('sync_walks','started_at','When the walk''s first page was committed (UTC text YYYY-MM-DDTHH:MM:SSZ).',NULL);
INSERT INTO column_docs VALUES('sync_walks','started_run','The run that started the walk.',NULL);
INSERT INTO column_docs VALUES('sync_walks','stream','The stream walked: cards.',NULL);
INSERT INTO column_docs VALUES('sync_walks','total_changed','1 when a page reported another total than the first.',NULL);
INSERT INTO column_docs VALUES('sync_walks','walk_id','Identifies the walk.',NULL);
INSERT INTO column_docs VALUES('sync_walks','walks','How many consecutive identical walks the row stands for (quiet walks are folded into the row before them).',NULL);
CREATE INDEX sync_runs_status ON sync_runs (status, run_id);
CREATE UNIQUE INDEX card_versions_current ON card_versions (card_id) WHERE valid_to IS NULL;
CREATE INDEX card_versions_run ON card_versions (run_id);
CREATE INDEX account_snapshots_taken ON account_snapshots (taken_at);
CREATE UNIQUE INDEX sync_walks_open ON sync_walks (stream) WHERE finished_at IS NULL;
CREATE INDEX run_pages_walk ON run_pages (walk_id, page);
CREATE VIEW account_balances AS
SELECT
    snapshot_id,
    run_id,
    taken_at,
    name,
    email,
    timezone,
    CASE WHEN transfer_amount_minor IS NULL THEN NULL
         WHEN transfer_amount_minor < 0 THEN '-' || (-(transfer_amount_minor / 100)) || '.' || substr('0' || (-(transfer_amount_minor % 100)), -2)
         ELSE (transfer_amount_minor / 100) || '.' || substr('0' || (transfer_amount_minor % 100), -2) END AS transfer_amount,
    CASE WHEN reach_amount_minor IS NULL THEN NULL
         WHEN reach_amount_minor < 0 THEN '-' || (-(reach_amount_minor / 100)) || '.' || substr('0' || (-(reach_amount_minor % 100)), -2)
         ELSE (reach_amount_minor / 100) || '.' || substr('0' || (reach_amount_minor % 100), -2) END AS reach_amount,
    CASE WHEN authorizations_minor IS NULL THEN NULL
         WHEN authorizations_minor < 0 THEN '-' || (-(authorizations_minor / 100)) || '.' || substr('0' || (-(authorizations_minor % 100)), -2)
         ELSE (authorizations_minor / 100) || '.' || substr('0' || (authorizations_minor % 100), -2) END AS authorizations,
    CASE WHEN balance_minor IS NULL THEN NULL
         WHEN balance_minor < 0 THEN '-' || (-(balance_minor / 100)) || '.' || substr('0' || (-(balance_minor % 100)), -2)
         ELSE (balance_minor / 100) || '.' || substr('0' || (balance_minor % 100), -2) END AS balance,
    CASE WHEN cards_balance_minor IS NULL THEN NULL
         WHEN cards_balance_minor < 0 THEN '-' || (-(cards_balance_minor / 100)) || '.' || substr('0' || (-(cards_balance_minor % 100)), -2)
         ELSE (cards_balance_minor / 100) || '.' || substr('0' || (cards_balance_minor % 100), -2) END AS cards_balance,
    CASE WHEN available_recharge_balance_minor IS NULL THEN NULL
         WHEN available_recharge_balance_minor < 0 THEN '-' || (-(available_recharge_balance_minor / 100)) || '.' || substr('0' || (-(available_recharge_balance_minor % 100)), -2)
         ELSE (available_recharge_balance_minor / 100) || '.' || substr('0' || (available_recharge_balance_minor % 100), -2) END AS available_recharge_balance,
    available_to_apply_card_count,
    applied_card_count
FROM account_snapshots;
CREATE VIEW account_balance_changes AS
WITH s AS (
    SELECT
        snapshot_id, run_id, taken_at,
        lag(snapshot_id) OVER w AS previous_snapshot_id,
        lag(taken_at) OVER w AS previous_taken_at,
        transfer_amount_minor, lag(transfer_amount_minor) OVER w AS prev_transfer_amount_minor,
        reach_amount_minor, lag(reach_amount_minor) OVER w AS prev_reach_amount_minor,
        authorizations_minor, lag(authorizations_minor) OVER w AS prev_authorizations_minor,
        balance_minor, lag(balance_minor) OVER w AS prev_balance_minor,
        cards_balance_minor, lag(cards_balance_minor) OVER w AS prev_cards_balance_minor,
        available_recharge_balance_minor, lag(available_recharge_balance_minor) OVER w AS prev_available_recharge_balance_minor
    FROM account_snapshots
    WINDOW w AS (ORDER BY taken_at, snapshot_id)
),
l AS (
    SELECT snapshot_id, run_id, taken_at, previous_snapshot_id, previous_taken_at, 'transfer_amount' AS amount, prev_transfer_amount_minor AS old_minor, transfer_amount_minor AS new_minor FROM s
    UNION ALL SELECT snapshot_id, run_id, taken_at, previous_snapshot_id, previous_taken_at, 'reach_amount', prev_reach_amount_minor, reach_amount_minor FROM s
    UNION ALL SELECT snapshot_id, run_id, taken_at, previous_snapshot_id, previous_taken_at, 'authorizations', prev_authorizations_minor, authorizations_minor FROM s
    UNION ALL SELECT snapshot_id, run_id, taken_at, previous_snapshot_id, previous_taken_at, 'balance', prev_balance_minor, balance_minor FROM s
    UNION ALL SELECT snapshot_id, run_id, taken_at, previous_snapshot_id, previous_taken_at, 'cards_balance', prev_cards_balance_minor, cards_balance_minor FROM s
    UNION ALL SELECT snapshot_id, run_id, taken_at, previous_snapshot_id, previous_taken_at, 'available_recharge_balance', prev_available_recharge_balance_minor, available_recharge_balance_minor FROM s
),
d AS (
    SELECT *, new_minor - old_minor AS change_minor
    FROM l
    WHERE old_minor IS NOT new_minor
)
SELECT
    snapshot_id, run_id, taken_at, previous_snapshot_id, previous_taken_at, amount,
    old_minor, new_minor, change_minor,
    CASE WHEN old_minor IS NULL THEN NULL
         WHEN old_minor < 0 THEN '-' || (-(old_minor / 100)) || '.' || substr('0' || (-(old_minor % 100)), -2)
         ELSE (old_minor / 100) || '.' || substr('0' || (old_minor % 100), -2) END AS old_value,
    CASE WHEN new_minor IS NULL THEN NULL
         WHEN new_minor < 0 THEN '-' || (-(new_minor / 100)) || '.' || substr('0' || (-(new_minor % 100)), -2)
         ELSE (new_minor / 100) || '.' || substr('0' || (new_minor % 100), -2) END AS new_value,
    CASE WHEN change_minor IS NULL THEN NULL
         WHEN change_minor < 0 THEN '-' || (-(change_minor / 100)) || '.' || substr('0' || (-(change_minor % 100)), -2)
         ELSE (change_minor / 100) || '.' || substr('0' || (change_minor % 100), -2) END AS change
FROM d;
CREATE INDEX rejected_cards_card ON rejected_cards (card_id, reason, data_sha256);
CREATE INDEX rejected_cards_run ON rejected_cards (last_run_id);
CREATE VIEW cards AS
WITH last_walk AS (
    SELECT finished_at, finished_run FROM sync_walks
    WHERE outcome = 'complete' AND finished_run IS NOT NULL
    ORDER BY walk_id DESC LIMIT 1
),
c AS (
    SELECT s.card_id, s.data, s.first_seen_at, s.last_seen_at, s.updated_at, s.removed_at,
           s.first_seen_run, s.last_seen_run, w.finished_at AS walk_at, w.finished_run AS walk_run,
           s.removed_at IS NULL
             AND (w.finished_run, w.finished_at) > (s.last_seen_run, s.last_seen_at)
             AND NOT EXISTS (SELECT 1 FROM removal_pending p WHERE p.card_id = s.card_id) AS by_walk
    FROM card_state s LEFT JOIN last_walk w
)
SELECT
    card_id,
    data,
    first_seen_at,
    CASE WHEN by_walk THEN walk_at ELSE last_seen_at END AS last_seen_at,
    updated_at,
    removed_at,
    first_seen_run,
    CASE WHEN by_walk THEN walk_run ELSE last_seen_run END AS last_seen_run
FROM c;
CREATE VIEW cards_current AS
SELECT card_id, data, first_seen_at, last_seen_at, updated_at, first_seen_run, last_seen_run
FROM cards
WHERE removed_at IS NULL;
CREATE VIEW sync_health AS
WITH last_success AS (
    SELECT max(run_id) AS run_id FROM sync_runs WHERE status = 'succeeded'
),
last_run AS (
    SELECT run_id, status, started_at, cards_rejected, removals_held, account_error
    FROM sync_runs ORDER BY run_id DESC LIMIT 1
),
last_snapshot AS (
    SELECT taken_at FROM account_snapshots ORDER BY taken_at DESC, snapshot_id DESC LIMIT 1
)
SELECT
    (SELECT run_id FROM last_success) AS last_success_run,
    (SELECT finished_at FROM sync_runs WHERE run_id = (SELECT run_id FROM last_success)) AS last_success_at,
    CAST(strftime('%s', 'now') - strftime('%s', (SELECT finished_at FROM sync_runs WHERE run_id = (SELECT run_id FROM last_success))) AS INTEGER) AS last_success_age_seconds,
    (SELECT count(*) FROM sync_runs
      WHERE status IN ('failed', 'abandoned')
        AND run_id > coalesce((SELECT run_id FROM last_success), 0)) AS failures_in_a_row,
    (SELECT run_id FROM last_run) AS last_run,
    (SELECT status FROM last_run) AS last_status,
    (SELECT started_at FROM last_run) AS last_started_at,
    (SELECT count(*) FROM sync_runs WHERE status = 'running') AS running,
    (SELECT CASE outcome WHEN 'complete' THEN 1 WHEN 'inconsistent' THEN 0 END
       FROM sync_walks WHERE outcome IN ('complete', 'inconsistent')
      ORDER BY walk_id DESC LIMIT 1) AS last_walk_consistent,
    (SELECT count(*) FROM card_state WHERE removed_at IS NULL) AS current_cards,
    (SELECT count(*) FROM removal_pending) AS pending_removals,
    (SELECT taken_at FROM last_snapshot) AS last_snapshot_at,
    CAST(strftime('%s', 'now') - strftime('%s', (SELECT taken_at FROM last_snapshot)) AS INTEGER) AS last_snapshot_age_seconds,
    (SELECT account_error FROM last_run) AS last_account_error,
    (SELECT cards_rejected FROM last_run) AS last_cards_rejected,
    (SELECT removals_held FROM last_run) AS last_removals_held;
CREATE VIEW cards_flat AS
SELECT card_id,
    json_extract(data, '$."id"') AS "id",
    json_extract(data, '$."masked_number"') AS "masked_number",
    json_extract(data, '$."card_number"') AS "card_number",
    json_extract(data, '$."brand"') AS "brand",
    json_extract(data, '$."status"') AS "status",
    json_extract(data, '$."balance"') AS "balance",
    json_extract(data, '$."currency"') AS "currency",
    json_extract(data, '$."holder"') AS "holder",
    json_extract(data, '$."label"') AS "label",
    json_extract(data, '$."expiry_month"') AS "expiry_month",
    json_extract(data, '$."expiry_year"') AS "expiry_year",
    json_extract(data, '$."purpose"') AS "purpose",
    json_extract(data, '$."spend_controls"') AS "spend_controls",
    json_extract(data, '$."risk_score"') AS "risk_score",
    json_extract(data, '$."metadata"') AS "metadata",
    json_extract(data, '$."created_at"') AS "created_at",
    json_extract(data, '$."updated_at"') AS "updated_at",
    json_extract(data, '$."note"') AS "note",
    json_extract(data, '$."café"') AS "café",
    json_extract(data, '$."url"') AS "url",
    json_extract(data, '$."ref"') AS "ref",
    json_extract(data, '$."reference_no"') AS "reference_no",
    json_extract(data, '$."created_ms"') AS "created_ms",
    json_extract(data, '$."by_number"') AS "by_number",
    json_extract(data, '$."Status"') AS "Status_2",
    removed_at
FROM card_state;
COMMIT;
PRAGMA user_version = 4;
PRAGMA application_id = 1129532995;
