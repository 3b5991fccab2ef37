// SPIR-V only ([[vk::offset]] is OS1010 on WGSL and Metal): [[vk::offset(n)]] at every depth.
// A struct whose only member is placed far on (DXC-era code reserves room that way), members
// after a placed one laid out again from its end, a placed member in an array's element struct,
// in a push block and in a structured buffer's element.
struct Distortion
{
    [[vk::offset(272)]] float alpha;
};

struct Shading
{
    float roughness;
    [[vk::offset(8)]] float metallic;
    float4 tint;        // 16, not 8 + 16: laid out again after 'metallic'
};

struct Light
{
    float4 color;
    [[vk::offset(32)]] float radius;
};

cbuffer ubo : register(b0)
{
    Distortion distortion;
    float after;        // follows the 288 bytes of 'distortion'
    Shading shading;
    Light lights[2];
};

struct Push
{
    float4 scale;
    [[vk::offset(48)]] float bias;
};

[[vk::push_constant]] Push push;

struct Item
{
    float weight;
    [[vk::offset(20)]] float extra;
    float2 value;       // 24 (std430), after 'extra'
};

RWStructuredBuffer<Item> items : register(u1);

[shader("compute")]
[numthreads(8, 1, 1)]
void CSMain(uint3 id : SV_DispatchThreadID)
{
    Item item = items[id.x];
    float light = lights[id.x % 2].radius * lights[id.x % 2].color.x;
    float4 scaled = shading.tint * (distortion.alpha + after + shading.metallic + light)
        * push.scale + push.bias;
    item.value = item.value * scaled.xy + item.extra;
    item.weight += shading.roughness;
    items[id.x] = item;
}
