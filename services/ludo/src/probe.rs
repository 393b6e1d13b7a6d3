//! `ludo probe URL`: a health probe for containers that have no shell or
//! curl. GET the URL; exit 0 on a 2xx answer.

/// GETs `url` over HTTP/1.1; the answer's status code.
pub async fn probe(url: &str) -> Result<u16, String> {
    let uri: hyper::Uri = url.parse().map_err(|e| format!("`{url}` is not a URL: {e}"))?;
    if uri.scheme_str() != Some("http") {
        return Err(format!("`{url}`: only http:// URLs are probed"));
    }
    let host = uri.host().ok_or_else(|| format!("`{url}` has no host"))?;
    let port = uri.port_u16().unwrap_or(80);
    let tcp = tokio::net::TcpStream::connect((host, port)).await.map_err(|e| format!("cannot connect to {host}:{port}: {e}"))?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp)).await.map_err(|e| format!("HTTP handshake: {e}"))?;
    tokio::spawn(connection);
    let authority = uri.authority().map_or_else(|| host.to_string(), ToString::to_string);
    let request = hyper::Request::get(uri.path_and_query().map_or("/", |p| p.as_str()))
        .header(hyper::header::HOST, authority)
        .header(hyper::header::USER_AGENT, "ludo-probe")
        .body(http_body_util::Empty::<hyper::body::Bytes>::new())
        .map_err(|e| e.to_string())?;
    let answer = sender.send_request(request).await.map_err(|e| format!("GET {url}: {e}"))?;
    Ok(answer.status().as_u16())
}
