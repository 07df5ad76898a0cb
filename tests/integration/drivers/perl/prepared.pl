#!/usr/bin/perl
# Perl DBI + DBD::mysql through the proxy with server-side prepared statements
# (mysql_server_prepare=1): routed writes and reads on msg and
# tg_channel_message, an aggregate on one shard, refusals that leave the
# connection usable. Placement checked directly on the backends (conv_id % 16).
use strict;
use warnings;
use DBI;
use DBI qw(:sql_types);

my ($passed, $failed) = (0, 0);
sub check {
    my ($ok, $what) = @_;
    if ($ok) { $passed++ } else { $failed++; print "FAIL: $what\n" }
}
sub env { my ($n, $f) = @_; return defined $ENV{$n} && $ENV{$n} ne '' ? $ENV{$n} : $f }
sub open_db {
    my ($port, $user, $password) = @_;
    return DBI->connect("DBI:mysql:database=im;host=127.0.0.1;port=$port;mysql_server_prepare=1",
                        $user, $password, { RaiseError => 1, PrintError => 0, AutoCommit => 1 });
}
sub error_of {
    my ($sth, @args) = @_;
    my $ok = eval { $sth->execute(@args); $sth->finish if $sth->{NUM_OF_FIELDS}; 1 };
    return $ok ? 0 : ($sth->err // -1);
}

my $proxy = open_db(env('SP_PROXY_PORT', 16033), 'app', 'app_pw');
my @db = (open_db(env('SP_DB0_PORT', 3307), 'proxy', 'proxy_pw'), open_db(env('SP_DB1_PORT', 3308), 'proxy', 'proxy_pw'));
sub executes {
    my $n = 0;
    $n += ($_->selectrow_array("SHOW GLOBAL STATUS LIKE 'Com_stmt_execute'"))[1] for @db;
    return $n;
}
my $before = executes();
my $base = int(rand(1 << 40)) * 16 + (1 << 50);
my $created = '2025-03-14 15:09:26.535';

my $insert = $proxy->prepare('INSERT INTO msg (conv_id, seq, msg_id, sender_uid, msg_type, content, status, created_at)'
    . ' VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
my @convs = map { $base + ($_ * 11) % 16 } 0 .. 15;
for my $conv (@convs) {
    $insert->bind_param(1, $conv, SQL_BIGINT);
    $insert->bind_param(2, 1, SQL_INTEGER);
    $insert->bind_param(3, $conv % 100000, SQL_INTEGER);
    $insert->bind_param(4, 42, SQL_INTEGER);
    $insert->bind_param(5, 1, SQL_INTEGER);
    $insert->bind_param(6, "\x00" . chr($conv % 256) . "\xff", SQL_BLOB);
    $insert->bind_param(7, 0, SQL_INTEGER);
    $insert->bind_param(8, $created);
    check($insert->execute() == 1, "insert $conv");
}
for my $conv (@convs) {
    my $shard = $conv % 16;
    my $b = $shard < 8 ? 0 : 1;
    my ($n) = $db[$b]->selectrow_array(sprintf('SELECT COUNT(*) FROM msg_%02d WHERE conv_id = %s', $shard, $conv));
    check($n == 1, "conv $conv: db$b.msg_$shard has $n rows, want 1");
}
my $read = $proxy->prepare('SELECT seq, content, created_at FROM msg WHERE conv_id = ?');
for my $conv (@convs) {
    $read->execute($conv);
    my $rows = $read->fetchall_arrayref;
    check(@$rows == 1 && $rows->[0][0] == 1 && $rows->[0][1] eq "\x00" . chr($conv % 256) . "\xff"
          && $rows->[0][2] eq $created, "read $conv");
}
for my $s (2 .. 4) {
    $insert->bind_param(1, $base + 5, SQL_BIGINT);
    $insert->bind_param(2, $s, SQL_INTEGER);
    $insert->bind_param(3, 900000 + $s, SQL_INTEGER);
    $insert->execute();
}
my $agg = $proxy->prepare('SELECT COUNT(*), SUM(seq), MAX(seq) FROM msg WHERE conv_id = ?');
$agg->execute($base + 5);
my @row = $agg->fetchrow_array;
$agg->finish;
check($row[0] == 4 && $row[1] == 10 && $row[2] == 4, "aggregate on one shard: @row");
my $update = $proxy->prepare('UPDATE msg SET status = ? WHERE conv_id = ? AND seq >= ?');
check($update->execute(2, $base + 5, 2) == 3, 'update count');

# tg_channel_message with month bounds as parameters.
my $peer = 1000000000 + int(rand(1000000000));
my $tg = $proxy->prepare('INSERT INTO tg_channel_message (peer_id, message_id, message_month, message_time, text_body,'
    . ' ingested_at) VALUES (?, ?, ?, ?, ?, ?)');
check($tg->execute($peer, 5, '2025-03-01', $created, 'hello from perl', $created) == 1, 'tg insert');
my $tg_read = $proxy->prepare('SELECT text_body FROM tg_channel_message WHERE peer_id = ? AND message_month IN (?, ?)');
$tg_read->execute($peer, '2025-03-01', '2025-04-01');
my $bodies = $tg_read->fetchall_arrayref;
check(@$bodies == 1 && $bodies->[0][0] eq 'hello from perl', 'tg read');
my ($tg_shard) = $db[0]->selectrow_array("SELECT CRC32(CONCAT('channel:', $peer)) % 64 DIV 16");
my $tg_table = sprintf('tg_channel_message_s%02d', $tg_shard);
my ($tg_count) = $db[int($tg_shard / 2)]->selectrow_array("SELECT COUNT(*) FROM $tg_table WHERE peer_id = $peer");
check($tg_count == 1, "tg row in $tg_table");

# Refusals, then the same connection and statements keep working.
check(error_of($proxy->prepare('UPDATE msg SET conv_id = ? WHERE conv_id = ?'), $base + 1, $base) == 9110,
      'key update refused with 9110');
check(error_of($proxy->prepare('DELETE FROM msg WHERE (conv_id = ? OR 1 = 1) AND seq = 0'), $base) == 9101,
      'missing key refused with 9101');
check(error_of($tg_read, $peer, '2024-01-01', '2025-04-01') == 9106, '16-month span refused with 9106');
$read->bind_param(1, -5, SQL_INTEGER);
check(error_of($read) == 9104, 'negative integer key refused with 9104');
$read->execute($base);
my @after = $read->fetchrow_array;
$read->finish;
check(@after && $after[0] == 1, 'read after refusals');

my $del = $proxy->prepare('DELETE FROM msg WHERE conv_id = ?');
my $deleted = 0;
$deleted += $del->execute($_) for @convs;
check($deleted == 19, "deleted $deleted rows, want 19");
$db[int($tg_shard / 2)]->do("DELETE FROM $tg_table WHERE peer_id = $peer");
my $n = executes() - $before;
check($n >= 30, "only $n COM_STMT_EXECUTE reached the backends");
print "perl: $n COM_STMT_EXECUTE on the backends\n";
print "$passed passed, $failed failed\n";
exit($failed == 0 ? 0 : 1);
