-- DDL of the logical tables, taken from the design documents in
-- ../shared/seeds/ (000: IM messages, 002: Telegram channel messages).
-- Read by scripts/schema. Each section starts with "-- table: <logical name>";
-- {table} is replaced by the physical table name, {shard} by the shard name.
-- Tables that the shard map shards are created once per shard on the shard's
-- backend; the others once on default_backend. For tables with a `month` rule
-- in the shard map the tool
-- appends PARTITION BY RANGE COLUMNS (<month column>) with one partition per
-- month plus pmax, so the statements below carry no PARTITION clause.

-- table: conv
CREATE TABLE IF NOT EXISTS {table} (
  conv_id    BIGINT UNSIGNED  NOT NULL COMMENT '会话 ID（雪花 ID）',
  conv_type  TINYINT UNSIGNED NOT NULL DEFAULT 1 COMMENT '1=单聊 2=群聊',
  owner_uid  BIGINT UNSIGNED  NOT NULL DEFAULT 0 COMMENT '群主；单聊为 0',
  name       VARCHAR(64)      NOT NULL DEFAULT '' COMMENT '群名',
  member_cnt INT UNSIGNED     NOT NULL DEFAULT 0 COMMENT '成员数（冗余，扩散时预分配用）',
  max_seq    BIGINT UNSIGNED  NOT NULL DEFAULT 0 COMMENT '已分配的最大序号（冗余，会话列表用）',
  created_at DATETIME(3)      NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  updated_at DATETIME(3)      NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (conv_id),
  KEY idx_owner (owner_uid, updated_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci COMMENT='会话表';

-- table: conv_member
CREATE TABLE IF NOT EXISTS {table} (
  conv_id  BIGINT UNSIGNED  NOT NULL,
  uid      BIGINT UNSIGNED  NOT NULL,
  role     TINYINT UNSIGNED NOT NULL DEFAULT 0 COMMENT '0=成员 1=管理员 2=群主',
  read_seq BIGINT UNSIGNED  NOT NULL DEFAULT 0 COMMENT '已读位点：未读数 = conv.max_seq - read_seq',
  join_at  DATETIME(3)      NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (conv_id, uid),
  KEY idx_uid_join (uid, join_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci COMMENT='会话成员表';

-- table: conv_seq
-- Not spelled out in seed 000 ("序号表单表": a single sequence table, seq
-- allocated atomically per conversation); this is the minimal shape:
--   UPDATE conv_seq SET seq = LAST_INSERT_ID(seq + 1) WHERE conv_id = ?
CREATE TABLE IF NOT EXISTS {table} (
  conv_id    BIGINT UNSIGNED NOT NULL COMMENT '会话 ID',
  seq        BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT '已分配的最大会话内序号',
  updated_at DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (conv_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci COMMENT='会话序号表';

-- table: msg
CREATE TABLE IF NOT EXISTS {table} (
  conv_id    BIGINT UNSIGNED  NOT NULL COMMENT '会话 ID（分片键）',
  seq        BIGINT UNSIGNED  NOT NULL COMMENT '会话内序号，由 conv_seq 原子分配',
  msg_id     BIGINT UNSIGNED  NOT NULL COMMENT '全局消息 ID（雪花）',
  sender_uid BIGINT UNSIGNED  NOT NULL COMMENT '发送者',
  msg_type   TINYINT UNSIGNED NOT NULL DEFAULT 1 COMMENT '1=文本 2=图片 3=撤回 4=系统',
  content    VARBINARY(4096)  NOT NULL COMMENT 'zstd 压缩后的消息体（大对象走 OSS，此处存 URL）',
  status     TINYINT UNSIGNED NOT NULL DEFAULT 0 COMMENT '0=正常 1=已撤回 2=已删除',
  created_at DATETIME(3)      NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (conv_id, seq),
  UNIQUE KEY uk_msg_id (msg_id),
  KEY idx_sender (sender_uid, created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci COMMENT='消息分片 {shard}';

-- table: user_read_cursor
CREATE TABLE IF NOT EXISTS {table} (
  uid        BIGINT UNSIGNED NOT NULL,
  conv_id    BIGINT UNSIGNED NOT NULL,
  read_seq   BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT '已读到的会话内序号',
  updated_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (uid, conv_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci COMMENT='用户已读位点';

-- table: user_sync_cursor
-- Seed 000 gives only "(uid, conv_id) 加 device_id" as the key of the
-- per-device sync position; the columns follow user_read_cursor.
CREATE TABLE IF NOT EXISTS {table} (
  uid        BIGINT UNSIGNED NOT NULL,
  conv_id    BIGINT UNSIGNED NOT NULL,
  device_id  VARCHAR(64)     NOT NULL COMMENT '设备 ID',
  sync_seq   BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT '该设备已收到的会话内序号',
  updated_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (uid, conv_id, device_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci COMMENT='设备同步位点';

-- table: user_conv_list
-- The conversation-list read model of seed 000:
-- user_conv_list(uid, conv_id, last_seq, last_preview, unread, pinned, updated_at),
-- primary key (uid, conv_id), index (uid, pinned, updated_at).
CREATE TABLE IF NOT EXISTS {table} (
  uid          BIGINT UNSIGNED  NOT NULL,
  conv_id      BIGINT UNSIGNED  NOT NULL,
  last_seq     BIGINT UNSIGNED  NOT NULL DEFAULT 0,
  last_preview VARCHAR(128)     NOT NULL DEFAULT '',
  unread       INT UNSIGNED     NOT NULL DEFAULT 0,
  pinned       TINYINT UNSIGNED NOT NULL DEFAULT 0,
  updated_at   DATETIME(3)      NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (uid, conv_id),
  KEY idx_uid_pinned (uid, pinned, updated_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci COMMENT='会话列表读模型';

-- table: tg_channel_message
CREATE TABLE IF NOT EXISTS {table} (
    peer_id          BIGINT NOT NULL,
    message_id       BIGINT NOT NULL,
    message_month    DATE NOT NULL,
    message_time     DATETIME(3) NOT NULL,
    edited_at        DATETIME(3) NULL,
    reply_to_msg_id  BIGINT NULL,
    text_body        MEDIUMTEXT NULL,
    media_type       VARCHAR(32) NULL,
    content_hash     CHAR(64) NULL,
    ingested_at      DATETIME(3) NOT NULL,

    PRIMARY KEY (peer_id, message_month, message_id),
    KEY idx_peer_msg (peer_id, message_id, message_month),
    KEY idx_peer_time (peer_id, message_time, message_id),
    KEY idx_peer_reply (peer_id, reply_to_msg_id, message_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci
