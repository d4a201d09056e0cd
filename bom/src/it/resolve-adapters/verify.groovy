// Every published artifact must have resolved from the BOM alone, all with the one version of this build.
def listed = new File(basedir, 'dependencies.txt').text
def expected = [
    'outbox-api': 'compile', 'outbox-engine': 'compile',
    'outbox-store-jdbi': 'compile', 'outbox-store-mongo': 'compile',
    'outbox-publisher-kafka': 'compile', 'outbox-publisher-rabbitmq': 'compile', 'outbox-publisher-sqs': 'compile',
    'outbox-micrometer': 'compile', 'outbox-opentelemetry': 'compile', 'outbox-kafka-connect': 'compile',
    'outbox-cli': 'compile', 'outbox-console': 'compile', 'outbox-relay': 'compile', 'outbox-spring-boot-starter': 'compile',
    'outbox-tck': 'test']
def versions = [] as Set
expected.each { artifact, scope ->
    def m = listed =~ /io\.outbox4j:${artifact}:jar:([^:\s]+):${scope}/
    assert m.find() : "the BOM did not give ${artifact} a version (or it did not resolve); dependency:list wrote:\n${listed}"
    versions << m.group(1)
}
assert versions.size() == 1 : "the BOM must give every artifact one version, but gave ${versions}"
println "resolve-adapters: ${expected.size()} artifacts resolved through the BOM at version ${versions.first()}"
return true
