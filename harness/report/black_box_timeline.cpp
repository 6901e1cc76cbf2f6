#include "harness/report/black_box_timeline.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "harness/check/black_box_jsonl.hpp"
#include "harness/report/report.hpp"

namespace onejob::report {
namespace {

namespace bb = check::black_box;

constexpr int kBbLaneHeight = 28;
constexpr int kBbLeft = 160;    // the lane names
constexpr int kBbWidth = 1200;  // the time axis

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

std::string status_colour(const bb::Response* response) {
  if (!response || !response->status) return "#888";
  const int status = *response->status;
  if (status < 300) return "#2a7";
  if (status < 500) return "#d80";
  return "#c22";
}

std::string execution_colour(const bb::Execution& execution) {
  if (execution.purpose == "certification") return "#89c";
  if (execution.outcome == "ok") return "#2a7";
  if (execution.outcome == "hang" || execution.outcome == "late") return "#a6c";
  return "#d80";
}

}  // namespace

std::string black_box_timeline_html(const bb::History& history,
                                    const std::vector<bb::Finding>& findings,
                                    std::string_view title, std::size_t max_elements) {
  // Which lines the findings name, to outline them.
  std::set<std::uint64_t> offending;
  for (const auto& finding : findings) offending.insert(finding.lines.begin(), finding.lines.end());

  std::map<std::string, const bb::Response*> answer_of;
  for (const auto& response : history.responses) answer_of[response.id] = &response;

  // The drawn elements: the first `max_elements` requests and executions in time.
  std::vector<const bb::Request*> requests;
  for (const auto& request : history.requests) requests.push_back(&request);
  std::vector<const bb::Execution*> executions;
  for (const auto& execution : history.executions) executions.push_back(&execution);
  std::ranges::sort(requests, {}, [](const auto* r) { return r->t_us; });
  std::ranges::sort(executions, {}, [](const auto* e) { return e->t_us; });
  const std::size_t total = requests.size() + executions.size();
  if (total > max_elements) {
    const std::size_t keep_requests = std::min(requests.size(), max_elements / 2);
    requests.resize(keep_requests);
    executions.resize(std::min(executions.size(), max_elements - keep_requests));
  }

  std::int64_t end_us = 1;
  for (const auto* request : requests) {
    end_us = std::max(end_us, request->t_us);
    if (const auto found = answer_of.find(request->id); found != answer_of.end()) {
      end_us = std::max(end_us, found->second->t_us);
    }
  }
  for (const auto* execution : executions) {
    end_us = std::max(end_us, execution->ended_us.value_or(execution->t_us));
  }
  if (history.quiet_from_us) end_us = std::max(end_us, *history.quiet_from_us);
  end_us += end_us / 50 + 1;
  const auto x = [&](std::int64_t t_us) {
    return kBbLeft + static_cast<double>(t_us) * kBbWidth / static_cast<double>(end_us);
  };

  // Lanes: clients in order of first appearance, then providers.
  std::vector<std::string> lanes;
  std::map<std::string, int> lane_of;
  const auto lane = [&](const std::string& name) {
    const auto [it, fresh] = lane_of.emplace(name, static_cast<int>(lanes.size()));
    if (fresh) lanes.push_back(name);
    return it->second;
  };
  const auto client_lane = [](const bb::Request& request) {
    return "client " + (request.client.empty() ? std::string("(unnamed)") : request.client);
  };
  for (const auto* request : requests) lane(client_lane(*request));
  for (const auto* execution : executions) lane("provider " + execution->provider);
  const int height = static_cast<int>(lanes.size()) * kBbLaneHeight + 40;

  std::string svg;
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    const int y = static_cast<int>(i) * kBbLaneHeight + 20;
    svg += "<text x=\"4\" y=\"" + std::to_string(y + 4) + "\">" + xml_escape(lanes[i]) + "</text>";
    svg += "<line class=\"lane\" x1=\"" + std::to_string(kBbLeft) + "\" x2=\"" +
           std::to_string(kBbLeft + kBbWidth) + "\" y1=\"" + std::to_string(y) + "\" y2=\"" +
           std::to_string(y) + "\"/>";
  }
  const auto element = [&](std::uint64_t line, const std::string& shape, const std::string& tip,
                           bool bad) {
    svg += "<g id=\"line-" + std::to_string(line) + "\"" + (bad ? " class=\"finding\"" : "") +
           "><title>line " + std::to_string(line) + ": " + xml_escape(tip) + "</title>" + shape +
           "</g>";
  };
  for (const auto* request : requests) {
    const int y = lane_of.at(client_lane(*request)) * kBbLaneHeight + 20;
    const auto found = answer_of.find(request->id);
    const bb::Response* response = found == answer_of.end() ? nullptr : found->second;
    const double x1 = x(request->t_us);
    const double x2 = response ? x(response->t_us) : kBbLeft + kBbWidth;
    const std::string colour = status_colour(response);
    std::string shape = "<circle cx=\"" + number(x1) + "\" cy=\"" + std::to_string(y) +
                        "\" r=\"3\" fill=\"" + colour + "\"/><line x1=\"" + number(x1) +
                        "\" x2=\"" + number(std::max(x2, x1 + 1)) + "\" y1=\"" + std::to_string(y) +
                        "\" y2=\"" + std::to_string(y) + "\" stroke=\"" + colour +
                        "\" stroke-width=\"3\"" +
                        (response && response->status ? "" : " stroke-dasharray=\"4 3\"") + "/>";
    std::string tip = bb::to_jsonl(*request);
    if (response) tip += "\n" + bb::to_jsonl(*response);
    const bool bad =
        offending.contains(request->line) || (response && offending.contains(response->line));
    // The answer's line is an anchor of its own, on the request's drawing.
    if (response) {
      shape += "<circle id=\"line-" + std::to_string(response->line) + "\" cx=\"" + number(x2) +
               "\" cy=\"" + std::to_string(y) + "\" r=\"" + (bad ? "5" : "2") + "\" fill=\"" +
               colour + "\"/>";
    }
    element(request->line, shape, tip, bad);
  }
  for (const auto* execution : executions) {
    const int y = lane_of.at("provider " + execution->provider) * kBbLaneHeight + 20;
    const double x1 = x(execution->t_us);
    const double x2 = execution->ended_us ? x(*execution->ended_us) : kBbLeft + kBbWidth;
    element(execution->line,
            "<rect x=\"" + number(x1) + "\" y=\"" + std::to_string(y - 6) + "\" width=\"" +
                number(std::max(2.0, x2 - x1)) + "\" height=\"12\" fill=\"" +
                execution_colour(*execution) + "\"" +
                (execution->ended_us ? "" : " fill-opacity=\"0.4\"") + "/>",
            bb::to_jsonl(*execution), offending.contains(execution->line));
  }
  if (history.quiet_from_us) {
    const std::string qx = number(x(*history.quiet_from_us));
    svg += "<line class=\"quiet\" x1=\"" + qx + "\" x2=\"" + qx + "\" y1=\"0\" y2=\"" +
           std::to_string(height) + "\"><title>quiet: the faults are over</title></line>";
  }
  svg += "<text x=\"" + std::to_string(kBbLeft) + "\" y=\"" + std::to_string(height - 4) +
         "\">0 s</text><text x=\"" + std::to_string(kBbLeft + kBbWidth - 60) + "\" y=\"" +
         std::to_string(height - 4) + "\">" + number(static_cast<double>(end_us) / 1e6) +
         " s</text>";

  std::string html =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + xml_escape(title) +
      "</title><style>body{font:13px sans-serif;margin:16px}svg{border:1px solid #ccc}"
      ".lane{stroke:#eee}.quiet{stroke:#36c;stroke-dasharray:6 4}"
      ".finding circle,.finding line,.finding rect{stroke:#e00;stroke-width:5}"
      "li.safety{color:#a00}</style></head><body>\n<h1>" +
      xml_escape(title) + "</h1>\n<p>" + std::to_string(history.requests.size()) + " requests, " +
      std::to_string(history.responses.size()) + " responses, " +
      std::to_string(history.executions.size()) + " provider executions";
  if (total > max_elements) {
    html += "; the lanes draw the first " + std::to_string(requests.size() + executions.size()) +
            " of " + std::to_string(total) + " requests and executions";
  }
  html += ".</p>\n<h2>Findings</h2>\n<ul>\n";
  if (findings.empty()) html += "<li>none: every black-box rule holds</li>\n";
  for (const auto& finding : findings) {
    html += std::string("<li class=\"") + (bb::is_safety(finding) ? "safety" : "availability") +
            "\"><b>" + xml_escape(finding.clause) + "</b>: " + xml_escape(finding.message) + " (";
    bool first = true;
    for (const auto line : finding.lines) {
      html += (first ? "" : ", ") + std::string("<a href=\"#line-") + std::to_string(line) +
              "\">line " + std::to_string(line) + "</a>";
      first = false;
    }
    html += ")</li>\n";
  }
  html +=
      "</ul>\n<h2>Timeline</h2>\n<p>Requests: a dot when sent, a line to the answer (green "
      "2xx, orange 4xx, red 5xx, grey dashed: none). Executions: a bar from start to answer "
      "(faded: never answered). Blue dashes: the quiet phase begins. Outlined in red: what a "
      "finding names. Hover for the history line.</p>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
      "width=\"" +
      std::to_string(kBbLeft + kBbWidth + 20) + "\" height=\"" + std::to_string(height) + "\">" +
      svg + "</svg>\n</body></html>\n";
  return html;
}

}  // namespace onejob::report
