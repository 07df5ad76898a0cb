// libmariadb mysql_stmt_* client used to capture real client COM_STMT_* bytes.
#include <mysql.h>
#include <stdio.h>
#include <string.h>
#define CHECK(x) do { if (x) { fprintf(stderr, "%s: %s\n", #x, mysql_error(m)); return 1; } } while (0)
int main(void) {
  MYSQL* m = mysql_init(NULL);
  unsigned int ssl = 0;
  mysql_optionsv(m, MYSQL_OPT_SSL_ENFORCE, &ssl);
  CHECK(!mysql_real_connect(m, "127.0.0.1", "cap", "secret", "capdb", 3395, NULL, 0));
  MYSQL_STMT* st = mysql_stmt_init(m);
  const char* q = "SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?";
  CHECK(mysql_stmt_prepare(st, q, strlen(q)));
  signed char ti = -7; unsigned short su = 65535; int li = -123456; unsigned long long bu = 18446744073709551615ULL;
  float f = 3.25f; double d = 2.5e-300;
  MYSQL_TIME date = {0}; date.year = 2024; date.month = 2; date.day = 29; date.time_type = MYSQL_TIMESTAMP_DATE;
  MYSQL_TIME dtm = {0}; dtm.year = 2024; dtm.month = 3; dtm.day = 1; dtm.hour = 13; dtm.minute = 14; dtm.second = 15;
  dtm.second_part = 999999; dtm.time_type = MYSQL_TIMESTAMP_DATETIME;
  MYSQL_TIME tm = {0}; tm.neg = 1; tm.hour = 838; tm.minute = 59; tm.second = 59; tm.time_type = MYSQL_TIMESTAMP_TIME;
  char longs[300]; memset(longs, 'z', sizeof longs); unsigned long longs_len = sizeof longs;
  char dec[] = "12345.678"; unsigned long dec_len = strlen(dec);
  char is_null = 1;
  MYSQL_BIND b[12]; memset(b, 0, sizeof b);
  b[0].buffer_type = MYSQL_TYPE_TINY; b[0].buffer = &ti;
  b[1].buffer_type = MYSQL_TYPE_SHORT; b[1].buffer = &su; b[1].is_unsigned = 1;
  b[2].buffer_type = MYSQL_TYPE_LONG; b[2].buffer = &li;
  b[3].buffer_type = MYSQL_TYPE_LONGLONG; b[3].buffer = &bu; b[3].is_unsigned = 1;
  b[4].buffer_type = MYSQL_TYPE_FLOAT; b[4].buffer = &f;
  b[5].buffer_type = MYSQL_TYPE_DOUBLE; b[5].buffer = &d;
  b[6].buffer_type = MYSQL_TYPE_DATE; b[6].buffer = &date;
  b[7].buffer_type = MYSQL_TYPE_DATETIME; b[7].buffer = &dtm;
  b[8].buffer_type = MYSQL_TYPE_TIME; b[8].buffer = &tm;
  b[9].buffer_type = MYSQL_TYPE_STRING; b[9].buffer = longs; b[9].length = &longs_len;
  b[10].buffer_type = MYSQL_TYPE_NEWDECIMAL; b[10].buffer = dec; b[10].length = &dec_len;
  b[11].buffer_type = MYSQL_TYPE_LONG; b[11].buffer = &li; b[11].is_null = &is_null;
  CHECK(mysql_stmt_bind_param(st, b));
  CHECK(mysql_stmt_execute(st));
  CHECK(mysql_stmt_store_result(st));
  mysql_stmt_free_result(st);
  // Same binding, new values: libmariadb does not resend the types.
  ti = 100; li = 42; bu = 0; is_null = 0; dtm.second_part = 0; tm.neg = 0; tm.hour = 1;
  CHECK(mysql_stmt_execute(st));
  CHECK(mysql_stmt_store_result(st));
  mysql_stmt_free_result(st);
  // Long data for a string parameter.
  MYSQL_STMT* st2 = mysql_stmt_init(m);
  const char* q2 = "SELECT CONCAT(?, 'x'), ? + 1";
  CHECK(mysql_stmt_prepare(st2, q2, strlen(q2)));
  MYSQL_BIND b2[2]; memset(b2, 0, sizeof b2);
  b2[0].buffer_type = MYSQL_TYPE_BLOB;
  long long v = 41;
  b2[1].buffer_type = MYSQL_TYPE_LONGLONG; b2[1].buffer = &v;
  CHECK(mysql_stmt_bind_param(st2, b2));
  CHECK(mysql_stmt_send_long_data(st2, 0, "chunk1-", 7));
  CHECK(mysql_stmt_send_long_data(st2, 0, "chunk2", 6));
  CHECK(mysql_stmt_execute(st2));
  CHECK(mysql_stmt_store_result(st2));
  mysql_stmt_close(st2);
  mysql_stmt_close(st);
  mysql_close(m);
  return 0;
}
