// Dynamic text page of the harness's Tomcat test application: an HTML "article" assembled per
// request from the page id (~12 KB, highly compressible), with links to further pages.
package harness;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

public class PageServlet extends HttpServlet {
    private static final String[] WORDS = {
        "tuning", "knob", "server", "thread", "request", "latency", "buffer", "queue",
        "socket", "connector", "memory", "cache", "visitor", "page", "catalogue", "metric"
    };

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        int id = 0;
        try {
            String raw = req.getParameter("id");
            id = raw == null ? 0 : Math.floorMod(Integer.parseInt(raw), 1000);
        } catch (NumberFormatException ignored) {
            resp.sendError(400, "id must be an integer");
            return;
        }
        StringBuilder html = new StringBuilder(16384);
        html.append("<!DOCTYPE html><html><head><title>Article ").append(id)
            .append("</title><link rel=\"stylesheet\" href=\"/static/site.css\"></head><body>");
        html.append("<h1>Article ").append(id).append("</h1>");
        int seed = id * 2654435 + 17;
        for (int p = 0; p < 30; p++) {
            html.append("<p>");
            for (int w = 0; w < 50; w++) {
                seed = seed * 1103515245 + 12345;
                html.append(WORDS[(seed >>> 16) & 15]).append(' ');
            }
            html.append("</p>\n");
        }
        for (int link = 1; link <= 5; link++) {
            html.append("<a href=\"/page?id=").append((id + link * 37) % 1000).append("\">next ")
                .append(link).append("</a> ");
        }
        html.append("</body></html>");
        resp.setContentType("text/html;charset=UTF-8");
        resp.getWriter().write(html.toString());
    }
}
