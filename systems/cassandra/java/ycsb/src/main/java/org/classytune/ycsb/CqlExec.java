/*
 * CqlExec: runs a few CQL statements, in place of `cqlsh -e` (cqlsh is not on Maven Central).
 *
 *   java -cp ... org.classytune.ycsb.CqlExec <host> <port> <timeout_s> "<stmt>; <stmt>; ..."
 *
 * It is meant for the schema statements the harness generates (CREATE KEYSPACE / CREATE TABLE /
 * DROP): they run in order, each waiting for schema agreement (so the next one, possibly sent to
 * another coordinator, sees it), and each success prints one line. Exit code 0 when all succeed;
 * else 1, with the error on stderr, and the statements after the failed one are not run.
 */
package org.classytune.ycsb;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

public final class CqlExec {

  private CqlExec() {
  }

  public static void main(String[] args) {
    if (args.length != 4) {
      System.err.println("usage: CqlExec <host> <port> <timeout_s> <statements separated by ;>");
      System.exit(1);
    }
    String statement = null;
    try {
      Duration timeout = Duration.ofSeconds(Long.parseLong(args[2]));
      List<String> statements = split(args[3]);
      try (CqlSession session = Drivers.builder(args[0], Integer.parseInt(args[1]),
          Drivers.config(timeout)
              .withDuration(DefaultDriverOption.CONTROL_CONNECTION_AGREEMENT_TIMEOUT, timeout)
              .build()).build()) {
        for (String each : statements) {
          statement = each;
          ResultSet result = session.execute(each);
          if (!result.getExecutionInfo().isSchemaInAgreement()) {
            throw new IllegalStateException("no schema agreement within " + args[2] + " s");
          }
          System.out.println("ok: " + each);
        }
      }
    } catch (RuntimeException e) {
      System.err.println("CqlExec: " + (statement == null ? "" : statement + ": ") + e);
      System.exit(1);
    }
    System.exit(0);
  }

  /** The statements of {@code text}: split on ';' outside '...' and "..." (CQL doubles an
   * embedded quote, which toggles twice and so needs no special case); blank ones dropped. */
  private static List<String> split(String text) {
    List<String> statements = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    char quote = 0;
    for (char c : text.toCharArray()) {
      if (quote == 0 && c == ';') {
        add(statements, current);
        continue;
      }
      if (quote == 0 && (c == '\'' || c == '"')) {
        quote = c;
      } else if (c == quote) {
        quote = 0;
      }
      current.append(c);
    }
    add(statements, current);
    return statements;
  }

  private static void add(List<String> statements, StringBuilder current) {
    String statement = current.toString().trim();
    if (!statement.isEmpty()) {
      statements.add(statement);
    }
    current.setLength(0);
  }
}
