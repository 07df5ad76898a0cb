#!/usr/bin/perl
# Perl DBI + DBD::mysql: transactions through the proxy (issue 11).
# Read-your-write inside begin_work with server-side prepared statements
# (mysql_server_prepare=1) and with text statements (mysql_server_prepare => 0
# per statement), on a shard of db1 and one of db0, then rollback (row gone) and
# commit (row visible from another connection and on the backend); autocommit
# off by AutoCommit => 0 and by text spellings, then ROLLBACK; a multi-row
# INSERT spanning both backends under autocommit off: OK and part of the
# transaction, or refused; never OK then lost.
# Rows: conv_id 9_100_064 + shard (shard 2 on db0, 9 on db1).
# SP_TX_DIRECT=1 runs the same against MariaDB itself (db0, database im_txref
# with an unsharded msg). Run by run_perl.sh transactions.
use strict;
use warnings;
use DBI;

my ($passed, $failed) = (0, 0);
sub check {
    my ($ok, $what) = @_;
    if ($ok) { $passed++ } else { $failed++; print "FAIL: $what\n" }
}
sub env { my ($n, $f) = @_; return defined $ENV{$n} && $ENV{$n} ne '' ? $ENV{$n} : $f }
my $DIRECT = ($ENV{SP_TX_DIRECT} // '') eq '1';

sub open_db {
    my ($port, $user, $password, $db, $autocommit) = @_;
    return DBI->connect("DBI:mysql:database=$db;host=127.0.0.1;port=$port;mysql_server_prepare=1",
                        $user, $password, { RaiseError => 1, PrintError => 0, AutoCommit => $autocommit // 1 });
}
sub target {
    my ($autocommit) = @_;
    return $DIRECT ? open_db(env('SP_DB0_PORT', 3307), 'root', 'root_pw', 'im_txref', $autocommit)
                   : open_db(env('SP_PROXY_PORT', 16033), 'app', 'app_pw', 'im', $autocommit);
}
sub err_text { my ($e) = @_; $e =~ s/\s+at \S+ line \d+\.?\s*$//; return "ERROR " . ($DBI::err // '?') . ": $e" }

use constant CONV_BASE => 9_100_064;    # % 16 == 0
use constant DB0_CONV => CONV_BASE + 2;
use constant DB1_CONV => CONV_BASE + 9;
my @SPAN = (CONV_BASE + 3, CONV_BASE + 12, CONV_BASE + 5, CONV_BASE + 14);    # db0, db1, db0, db1
my $INSERT = 'INSERT INTO msg (conv_id, seq, msg_id, sender_uid, msg_type, content, status) VALUES (?, ?, ?, 77, 1, ?, 0)';
my $SELECT = 'SELECT seq, content FROM msg WHERE conv_id = ? AND seq = ?';

my $seq_base = (1_000_000 + int(rand(999_000_000))) * 1000;
my $counter = 0;
sub next_row {
    my ($conv) = @_;
    $counter++;
    my $seq = $seq_base + $counter;
    return { conv => $conv, seq => $seq, msg_id => $conv * 1000 + $counter, content => "perl-$conv-$seq" };
}

my @backend = (open_db(env('SP_DB0_PORT', 3307), 'root', 'root_pw', 'im'),
               open_db(env('SP_DB1_PORT', 3308), 'root', 'root_pw', 'im'));
if ($DIRECT) {
    $backend[0]->do('CREATE DATABASE IF NOT EXISTS im_txref');
    $backend[0]->do('CREATE TABLE IF NOT EXISTS im_txref.msg LIKE im.msg_00');
    print "perl: direct mode, MariaDB on " . env('SP_DB0_PORT', 3307) . " database im_txref\n";
}
my $checker = target();

# "through another connection,on the backend"
sub counts {
    my ($r) = @_;
    my ($through) = $checker->selectrow_array("SELECT COUNT(*) FROM msg WHERE conv_id = $r->{conv} AND seq = $r->{seq}");
    return "$through,$through" if $DIRECT;
    my $shard = $r->{conv} % 16;
    my ($physical) = $backend[int($shard / 8)]->selectrow_array(
        sprintf('SELECT COUNT(*) FROM msg_%02d WHERE conv_id = %d AND seq = %d', $shard, $r->{conv}, $r->{seq}));
    return "$through,$physical";
}
sub expect_count {
    my ($r, $want, $when) = @_;
    my $got = counts($r);
    check($got eq "$want,$want", "$when: conv_id $r->{conv} seq $r->{seq} (shard " . ($r->{conv} % 16)
        . "): $got rows (through another connection, on the backend), want $want");
}
sub insert_row {
    my ($dbh, $r, $prepared) = @_;
    my $n;
    if ($prepared) {
        $n = $dbh->prepare($INSERT)->execute($r->{conv}, $r->{seq}, $r->{msg_id}, $r->{content});
    } else {
        $n = $dbh->prepare("INSERT INTO msg (conv_id, seq, msg_id, sender_uid, msg_type, content, status) VALUES "
            . "($r->{conv}, $r->{seq}, $r->{msg_id}, 77, 1, '$r->{content}', 0)", { mysql_server_prepare => 0 })->execute;
    }
    die "insert affected $n rows\n" unless $n == 1;
}
sub read_back {
    my ($dbh, $r, $prepared) = @_;
    my $sth;
    if ($prepared) {
        $sth = $dbh->prepare($SELECT);
        $sth->execute($r->{conv}, $r->{seq});
    } else {
        $sth = $dbh->prepare("SELECT seq, content FROM msg WHERE conv_id = $r->{conv} AND seq = $r->{seq}",
                             { mysql_server_prepare => 0 });
        $sth->execute;
    }
    return [map { "$_->[0]:$_->[1]" } @{ $sth->fetchall_arrayref }];
}

sub read_your_write {
    my ($conv, $prepared, $commit) = @_;
    my $name = "read-your-write prepared=$prepared commit=$commit shard " . ($conv % 16);
    my $r = next_row($conv);
    my $dbh = target();
    my $ok = eval {
        $dbh->begin_work;
        insert_row($dbh, $r, $prepared);
        my $got = read_back($dbh, $r, $prepared);
        check(@$got == 1 && $got->[0] eq "$r->{seq}:$r->{content}", "$name: SELECT in the transaction: [@$got]");
        expect_count($r, 0, "$name: uncommitted, seen from outside");
        if ($commit) { $dbh->commit } else { $dbh->rollback }
        1;
    };
    if (!$ok) { check(0, "$name: " . err_text($@)); return }
    $dbh->disconnect;
    expect_count($r, $commit ? 1 : 0, "$name: after " . ($commit ? 'commit' : 'rollback'));
}

sub autocommit_off {
    my ($spelling, $conv, $prepared) = @_;
    my $name = "$spelling (prepared=$prepared, shard " . ($conv % 16) . ")";
    my $r = next_row($conv);
    my $dbh;
    my $ok = eval {
        if ($spelling eq 'AutoCommit => 0') {
            $dbh = target(0);
        } else {
            $dbh = target();
            $dbh->do($spelling);
        }
        my ($ac) = $dbh->selectrow_array('SELECT @@autocommit');
        check($ac == 0, "$name: \@\@autocommit is $ac");
        insert_row($dbh, $r, $prepared);
        check(@{ read_back($dbh, $r, $prepared) } == 1, "$name: read your write");
        expect_count($r, 0, "$name: uncommitted, seen from outside");
        $dbh->do('ROLLBACK');
        1;
    };
    if (!$ok) { check(0, "$name: " . err_text($@)); return }
    { local $dbh->{PrintWarn} = 0; $dbh->disconnect; }
    expect_count($r, 0, "$name: after ROLLBACK");
}

sub spanning_insert {
    my ($prepared, $ending) = @_;
    my $name = "multi-backend INSERT under autocommit off (prepared=$prepared) then $ending";
    my (@rows, @values, @args);
    for my $conv (@SPAN) {
        my $r = next_row($conv);
        push @rows, $r;
        if ($prepared) {
            push @values, "(?, ?, ?, 77, 1, 'span', 0)";
            push @args, $r->{conv}, $r->{seq}, $r->{msg_id};
        } else {
            push @values, "($r->{conv}, $r->{seq}, $r->{msg_id}, 77, 1, 'span', 0)";
        }
    }
    my $sql = 'INSERT INTO msg (conv_id, seq, msg_id, sender_uid, msg_type, content, status) VALUES ' . join(', ', @values);
    my ($outcome, $want) = ('OK', 0);
    my $dbh = target(0);
    my $ok = eval {
        my $n = $dbh->prepare($sql, { mysql_server_prepare => $prepared ? 1 : 0 })->execute(@args);
        check($n == @rows, "$name: affected $n");
        if ($ending eq 'COMMIT') { $dbh->commit; $want = 1 } else { $dbh->rollback }
        1;
    };
    if (!$ok) {
        $outcome = err_text($@);
        $dbh->rollback;
    }
    $dbh->disconnect;
    print "  $name: $outcome\n";
    expect_count($_, $want, "$name ($outcome)") for @rows;
}

sub cleanup {
    my $dbh = target();
    $dbh->do("DELETE FROM msg WHERE conv_id = $_") for (DB0_CONV, DB1_CONV, @SPAN);
    $dbh->disconnect;
}

cleanup();
my $ok = eval {
    for my $conv (DB1_CONV, DB0_CONV) {
        for my $prepared (1, 0) {
            read_your_write($conv, $prepared, 0);
            read_your_write($conv, $prepared, 1);
        }
    }
    for my $conv (DB1_CONV, DB0_CONV) {
        for my $prepared (1, 0) {
            autocommit_off($_, $conv, $prepared)
                for ('AutoCommit => 0', 'SET autocommit=false', "SET SESSION autocommit = 'off'", 'SET @@autocommit = FALSE');
        }
    }
    for my $prepared (1, 0) {
        spanning_insert($prepared, 'ROLLBACK');
        spanning_insert($prepared, 'COMMIT');
        cleanup();
    }
    1;
};
check(0, "unexpected: $@") unless $ok;
cleanup();
print "$passed passed, $failed failed\n";
exit($failed > 0 ? 1 : 0);
